// Queue Split: Start Split… — workload (inferred from the workspace, else picked), queues from
// its declaration, a filter (x-queue-split-user=<me> by default, or my OpenTelemetry routing key
// baggage:queue-split-user=<me>), the delivery mode;
// then the QueueSplit is created and a sidecar serves it, with progress until it is Active.
import * as vscode from 'vscode';
import { namespaceOfNode, type TreeNode } from '../model/tree';
import type { QueueSplit, SplitRequest } from '../model/types';
import { UserError } from '../notifications';
import { relayFromSettings } from '../relaySettings';
import { SidecarFailure } from '../sidecar/splitSession';
import type { Services } from '../services';
import { restartsWorkload } from '../model/workloadRestart';
import { settings } from '../settings';
import { chooseMode, chooseQueues, chooseWorkload, inputFilter, inputHttpTarget } from './pickers';

export async function startSplit(services: Services, node?: TreeNode): Promise<void> {
  // A tree row's namespace (the view may show several), else the selected one.
  const api = await services.cluster.api(namespaceOfNode(node));
  const [workloads, splits] = await Promise.all([api.listWorkloads(), api.listSplits()]);
  const fromNode =
    node?.kind === 'workload' || node?.kind === 'queue'
      ? { kind: node.workload.kind, name: node.workload.name }
      : undefined;
  const workload = await chooseWorkload(services, workloads, fromNode);
  if (workload === undefined) return;
  const queues = await chooseQueues(workload, node?.kind === 'queue' ? [node.queue.name] : undefined);
  if (queues === undefined) return;
  const owner = await services.cluster.owner();
  const filter = await inputFilter(workload, queues, splits, owner, services.context.workspaceState);
  if (filter === undefined) return;
  const mode = await chooseMode();
  if (mode === undefined) return;
  const request: SplitRequest = {
    target: api.target,
    workload: { kind: workload.kind, name: workload.name },
    queues,
    filter,
    owner,
    mode,
  };
  if (mode === 'http') {
    const target = await inputHttpTarget();
    if (target === undefined) return;
    request.httpTarget = target;
  }
  if (mode === 'relay') request.relay = relayFromSettings();
  if (!(await confirmRestart(services, splits, request))) return;
  const session = await services.sessions.ensure(request);
  let ready;
  try {
    // Said once, in the progress that is shown anyway: activation rolls the team's workload.
    ready = await services.sessions.waitUntilReady(
      session,
      vscode.l10n.t("Starting your split of {0} (activating it restarts the workload's pods)", session.label),
    );
  } catch (err) {
    if (!(err instanceof SidecarFailure)) throw err;
    if (session.stopping !== undefined) return; // the user cancelled
    throw new UserError(
      err.message,
      err.suggestedAction,
      [
        {
          title: vscode.l10n.t('Stop Split'),
          run: () => services.sessions.stopByName(session.name, session.split.metadata.uid),
        },
      ],
      err.fixes,
    );
  }
  const where =
    ready.mode === 'env'
      ? ready.secretEnv.length > 0
        ? vscode.l10n.t(
            'env for your process: {0} (+ {1} secret, in {2})',
            Object.keys(ready.env).join(', '),
            ready.secretEnv.length,
            ready.envFile ?? vscode.l10n.t('the env file'),
          )
        : vscode.l10n.t('env for your process: {0}', Object.keys(ready.env).join(', '))
      : ready.queues.map((q) => `${q.name} → ${q.deliversTo}`).join(', ');
  services.notifier.info(vscode.l10n.t('Split active: {0} — {1}.', session.label, where), {
    title: vscode.l10n.t('Show Details'),
    run: () => vscode.commands.executeCommand('queueSplit.showSplitDetails', session.name),
  });
}

/**
 * The first split of a workload restarts the team's pods: said before, naming the rollout, once
 * per start unless the user said "don't ask again" (queueSplit.confirmWorkloadRestart). Asked by
 * debug launches too (debug/provider.ts).
 */
export async function confirmRestart(
  services: Services,
  splits: readonly QueueSplit[],
  request: SplitRequest,
): Promise<boolean> {
  if (!settings.confirmWorkloadRestart() || !restartsWorkload(splits, request.workload)) return true;
  const { kind, name } = request.workload;
  // Buttons are compared as shown: localized.
  const start = vscode.l10n.t('Start Split');
  const always = vscode.l10n.t("Start, Don't Ask Again");
  const answer = await vscode.window.showWarningMessage(
    vscode.l10n.t('Starting this split restarts {0} {1} in {2}.', kind, name, request.target.namespace),
    {
      modal: true,
      detail: vscode.l10n.t(
        "It is the first split of {0}: its pods stop, then roll out again reading the split's shadows, and roll out once more when its last split ends. Your teammates' messages keep reaching it and none is lost.",
        name,
      ),
    },
    start,
    always,
  );
  if (answer === always) await settings.stopConfirmingWorkloadRestart();
  return answer === start || answer === always;
}
