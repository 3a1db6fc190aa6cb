// Queue Split: Install Controller into Cluster… — applies the CRD and deploy/manifests.ts'
// controller manifests with the user's credentials, after a modal confirmation that lists every
// object it creates or replaces. For automation (tests, scripts) it accepts `confirmed: true`
// (no dialog), `dryRun: true` (the API server validates everything without persisting) and
// `options` (install options over the settings, e.g. a test build's image and flags).
import * as vscode from 'vscode';
import type { InstallOptions } from '../../deploy/manifests';
import { installConfirmation } from '../model/install';
import type { Services } from '../services';
import { settings } from '../settings';

export interface InstallArgs {
  dryRun?: boolean;
  confirmed?: boolean;
  options?: Partial<InstallOptions>;
}

export async function installController(
  services: Services,
  args: InstallArgs = {},
): Promise<string[] | undefined> {
  const kube = await services.cluster.kube();
  const api = await services.cluster.api();
  const { crd, manifests, install } = kube.installObjects(
    { image: settings.installImage(), namespace: settings.installNamespace() },
    args.options,
  );
  const objects = [crd, ...manifests];
  if (args.confirmed !== true) {
    const installButton = vscode.l10n.t('Install');
    const answer = await vscode.window.showWarningMessage(
      vscode.l10n.t('Install Queue Split into the cluster?'),
      {
        modal: true,
        detail: installConfirmation(
          api.target.context,
          api.target.server,
          objects as unknown as Parameters<typeof installConfirmation>[2],
        ),
      },
      installButton,
    );
    if (answer !== installButton) {
      services.log.info(`install into ${api.target.context} cancelled: nothing applied`);
      return undefined;
    }
  }
  const applied: string[] = [];
  await services.notifier.progress(
    args.dryRun === true
      ? vscode.l10n.t('Checking (dry run) Queue Split in {0}', api.target.context)
      : vscode.l10n.t('Installing Queue Split in {0}', api.target.context),
    async (report) => {
      await api.apply([crd], args.dryRun === true, (line) => {
        applied.push(line);
        report(line);
      });
      if (args.dryRun !== true) {
        report(vscode.l10n.t('waiting for the QueueSplit resource to be served'));
        await api.waitForCrd(String(crd.metadata?.name), 60_000);
      }
      await api.apply(manifests, args.dryRun === true, (line) => {
        applied.push(line);
        report(line);
      });
    },
  );
  services.notifier.info(
    args.dryRun === true
      ? vscode.l10n.t('Dry run: the cluster accepts all {0} Queue Split objects.', objects.length)
      : vscode.l10n.t(
          'Queue Split is installed in {0} (controller in namespace {1}). Bind the queuesplit-developer ClusterRole to developers in their namespaces.',
          api.target.context,
          install.namespace,
        ),
  );
  if (args.dryRun !== true) services.cluster.refresh();
  return applied;
}
