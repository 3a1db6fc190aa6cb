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
    const answer = await vscode.window.showWarningMessage(
      'Install Queue Split into the cluster?',
      {
        modal: true,
        detail: installConfirmation(
          api.target.context,
          api.target.server,
          objects as unknown as Parameters<typeof installConfirmation>[2],
        ),
      },
      'Install',
    );
    if (answer !== 'Install') {
      services.log.info(`install into ${api.target.context} cancelled: nothing applied`);
      return undefined;
    }
  }
  const applied: string[] = [];
  await services.notifier.progress(
    `${args.dryRun === true ? 'Checking (dry run)' : 'Installing'} Queue Split in ${api.target.context}`,
    async (report) => {
      await api.apply([crd], args.dryRun === true, (line) => {
        applied.push(line);
        report(line);
      });
      if (args.dryRun !== true) {
        report('waiting for the QueueSplit resource to be served');
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
      ? `Dry run: the cluster accepts all ${objects.length} Queue Split objects.`
      : `Queue Split is installed in ${api.target.context} (controller in namespace ${install.namespace}). Bind the queuesplit-developer ClusterRole to developers in their namespaces.`,
  );
  if (args.dryRun !== true) services.cluster.refresh();
  return applied;
}
