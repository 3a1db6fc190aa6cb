// Queue Split: Start Split… — workload (inferred from the workspace, else picked), queues from
// its declaration, a filter (x-queue-split-user=<me> by default, or my OpenTelemetry routing key
// baggage:queue-split-user=<me>), the delivery mode;
// then the QueueSplit is created and a sidecar serves it, with progress until it is Active.
import * as vscode from 'vscode';
import type { TreeNode } from '../model/tree';
import type { SplitRequest } from '../model/types';
import { UserError } from '../notifications';
import { relayFromSettings } from '../relaySettings';
import { SidecarFailure } from '../sidecar/splitSession';
import type { Services } from '../services';
import { chooseMode, chooseQueues, chooseWorkload, inputFilter, inputHttpTarget } from './pickers';

export async function startSplit(services: Services, node?: TreeNode): Promise<void> {
  const api = await services.cluster.api();
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
  const session = await services.sessions.ensure(request);
  let ready;
  try {
    // Said once, in the progress that is shown anyway: activation rolls the team's workload.
    ready = await services.sessions.waitUntilReady(
      session,
      `Starting your split of ${session.label} (activating it restarts the workload's pods)`,
    );
  } catch (err) {
    if (!(err instanceof SidecarFailure)) throw err;
    if (session.stopping !== undefined) return; // the user cancelled
    throw new UserError(
      err.message,
      err.suggestedAction,
      [
        {
          title: 'Stop Split',
          run: () => services.sessions.stopByName(session.name, session.split.metadata.uid),
        },
      ],
      err.fixes,
    );
  }
  const where =
    ready.mode === 'env'
      ? `env for your process: ${Object.keys(ready.env).join(', ')}${ready.secretEnv.length > 0 ? ` (+ ${ready.secretEnv.length} secret, in ${ready.envFile ?? 'the env file'})` : ''}`
      : ready.queues.map((q) => `${q.name} → ${q.deliversTo}`).join(', ');
  services.notifier.info(`Split active: ${session.label} — ${where}.`, {
    title: 'Show Details',
    run: () => vscode.commands.executeCommand('queueSplit.showSplitDetails', session.name),
  });
}
