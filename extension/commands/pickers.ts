// The quick picks and input boxes the commands share. Each returns undefined when the user
// cancels (Escape), which ends the command quietly.
import { relaySettingNames, sourceLabel } from '../../core/providers';
import * as vscode from 'vscode';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import type { SidecarDeliveryMode } from '../../core/sidecarProtocol';
import type { ClusterApi } from '../kube';
import { filterForDisplay, isMine } from '../model/owner';
import { splitPhase } from '../model/phases';
import { checkFilter, defaultFilterText, inferWorkload, type WorkloadRefText } from '../model/startSplit';
import type { WorkloadInfo } from '../model/types';
import { splittable } from '../model/splittable';
import { UserError } from '../notifications';
import type { Services } from '../services';
import { settings } from '../settings';
import { workloadCandidates } from '../workspace';

interface Item<T> extends vscode.QuickPickItem {
  value: T;
}

/**
 * The workload to split: the one the workspace points at when exactly one annotated workload
 * matches (setting, manifests, folder name), else a quick pick with the likely ones first.
 */
export async function chooseWorkload(
  services: Services,
  workloads: readonly WorkloadInfo[],
  wanted?: WorkloadRefText,
): Promise<WorkloadInfo | undefined> {
  const namespace = workloads[0]?.namespace ?? '';
  if (workloads.length === 0)
    throw new UserError(
      'No Deployment or StatefulSet in this namespace declares queues (telepresence.io/queue-config).',
      'Pick the right namespace with "Queue Split: Select Context/Namespace…", or annotate your workload (see the Queue Split walkthrough).',
      [
        {
          title: 'Select Context/Namespace',
          run: () => vscode.commands.executeCommand('queueSplit.selectContext'),
        },
      ],
    );
  if (wanted !== undefined) {
    const match = workloads.find(
      (w) => w.name === wanted.name && (wanted.kind === undefined || w.kind === wanted.kind),
    );
    if (match === undefined)
      throw new UserError(
        `No annotated ${wanted.kind ?? 'workload'} "${wanted.name}" in namespace ${namespace}.`,
        `Annotated workloads here: ${workloads.map((w) => w.name).join(', ')}. Check the name, or the namespace with "Select Context/Namespace…".`,
      );
    return match;
  }
  const inference = inferWorkload(await workloadCandidates(services.log), workloads);
  if (inference.inferred !== undefined) {
    services.log.info(
      `workload ${inference.inferred.workload.name} inferred from ${inference.inferred.inferredFrom ?? 'the workspace'}`,
    );
    return inference.inferred.workload;
  }
  const items: Item<WorkloadInfo>[] = inference.ranked.map(({ workload, inferredFrom }) => ({
    label: workload.name,
    description: `${workload.kind} · ${workload.queues.map((q) => q.name).join(', ') || 'no queues'}`,
    ...(inferredFrom !== undefined ? { detail: `$(lightbulb) matches ${inferredFrom}` } : {}),
    ...(!splittable(workload)
      ? { detail: `$(warning) invalid declaration: ${workload.errors[0] ?? ''}` }
      : {}),
    value: workload,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Start Split (1/4): workload',
    placeHolder: `Workloads with a queue declaration in namespace ${namespace}`,
    matchOnDescription: true,
    ignoreFocusOut: true,
  });
  return picked?.value;
}

export async function chooseQueues(
  workload: WorkloadInfo,
  preselected?: readonly string[],
): Promise<string[] | undefined> {
  if (!splittable(workload))
    throw new UserError(
      `${workload.kind} ${workload.name} cannot be split: ${workload.errors.join(' | ')}`,
      'Fix its telepresence.io/queue-config annotation (or the env it names), then try again.',
    );
  const items: Item<string>[] = workload.queues.map((q) => ({
    label: q.name,
    description: `${sourceLabel(q.provider)} ${q.source}`,
    picked: preselected === undefined || preselected.includes(q.name),
    value: q.name,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: `Start Split (2/4): queues of ${workload.name}`,
    placeHolder: 'The queues to split (all declared ones are selected)',
    canPickMany: true,
    ignoreFocusOut: true,
  });
  if (picked === undefined) return undefined;
  if (picked.length === 0) throw new UserError('No queue selected.', 'Select at least one queue.');
  return picked.map((p) => p.value);
}

export async function inputFilter(
  workload: WorkloadInfo,
  queues: readonly string[],
  splits: readonly QueueSplit[],
  owner: string,
): Promise<Record<string, string> | undefined> {
  const context = { workload: { kind: workload.kind, name: workload.name }, queues, splits, owner };
  const text = await vscode.window.showInputBox({
    title: 'Start Split (3/4): header filter',
    prompt: 'Messages whose headers match ALL these key=value pairs come to you (comma-separated).',
    value: defaultFilterText(owner),
    ignoreFocusOut: true,
    validateInput: (value) => checkFilter(value, context).error,
  });
  if (text === undefined) return undefined;
  const result = checkFilter(text, context);
  if (result.filter === undefined)
    throw new UserError(result.error ?? 'Invalid filter.', 'Fix the filter and start again.');
  return { ...result.filter };
}

export async function chooseMode(): Promise<SidecarDeliveryMode | undefined> {
  const preferred = settings.deliveryMode();
  const modes: Item<SidecarDeliveryMode>[] = [
    {
      label: 'http',
      description: 'POST each message to your running service',
      detail:
        'The sidecar consumes your session shadow and POSTs each message (CloudEvents binary mode); acked after a 2xx.',
      value: 'http',
    },
    {
      label: 'env',
      description: 'your process consumes its session shadow itself',
      detail:
        'You get env overrides (source → your session shadow); a launch configuration with a queueSplit block merges them.',
      value: 'env',
    },
    {
      label: 'relay',
      description: 'republish into a broker you run locally',
      detail: `Needs ${relaySettingNames().join(' / ')}.`,
      value: 'relay',
    },
  ];
  modes.sort((a, b) => (a.value === preferred ? -1 : b.value === preferred ? 1 : 0));
  const picked = await vscode.window.showQuickPick(modes, {
    title: 'Start Split (4/4): delivery',
    placeHolder: 'How your messages reach the process you debug',
    ignoreFocusOut: true,
  });
  return picked?.value;
}

export async function inputHttpTarget(): Promise<string | undefined> {
  return vscode.window.showInputBox({
    title: 'Start Split: http target',
    prompt: 'The URL of your local service the sidecar POSTs each message to',
    value: settings.httpTarget(),
    ignoreFocusOut: true,
    validateInput: (value) => {
      try {
        const url = new URL(value);
        return url.protocol === 'http:' || url.protocol === 'https:'
          ? undefined
          : 'Use an http:// or https:// URL.';
      } catch {
        return 'Not a URL, e.g. http://127.0.0.1:8080/events';
      }
    },
  });
}

/** A split to act on: the one a tree node names, else a pick among mine (skipped when there is one). */
export interface SplitChoice {
  name: string;
  split?: QueueSplit;
  mine: boolean;
}

export async function chooseMySplit(
  services: Services,
  api: ClusterApi,
  purpose: string,
  filter: (split: QueueSplit) => boolean = () => true,
): Promise<SplitChoice | undefined> {
  const owner = await services.cluster.owner();
  const splits = (await api.listSplits()).filter((s) => isMine(s, owner) && filter(s));
  const byName = new Map(splits.map((s) => [s.metadata.name, s]));
  if (splits.length === 0)
    throw new UserError(
      `You have no splits in namespace ${api.target.namespace} (context ${api.target.context}).`,
      'Start one with "Queue Split: Start Split…" or a launch configuration with a queueSplit block.',
    );
  if (splits.length === 1) {
    const only = splits[0]!;
    return { name: only.metadata.name, split: only, mine: true };
  }
  const picked = await vscode.window.showQuickPick(
    splits.map((s) => {
      const session = services.sessions.byName(api.target.context, api.target.namespace, s.metadata.name);
      return {
        label: `${s.spec.workload.name} [${s.spec.queues.join(', ')}]`,
        description: `${splitPhase(s)} · ${filterForDisplay(s.spec.filter, true)}`,
        detail: `${s.metadata.name}${session !== undefined ? ` · sidecar ${session.view.stage} in this window` : ''}`,
        value: s.metadata.name,
      };
    }),
    { title: purpose, placeHolder: 'Which of your splits?', ignoreFocusOut: true },
  );
  if (picked === undefined) return undefined;
  const split = byName.get(picked.value);
  return { name: picked.value, ...(split !== undefined ? { split } : {}), mine: true };
}
