// The quick picks and input boxes the commands share. Each returns undefined when the user
// cancels (Escape), which ends the command quietly.
import { relaySettingNames, sourceLabel } from '../../core/providers';
import * as vscode from 'vscode';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import type { SidecarDeliveryMode } from '../../core/sidecarProtocol';
import type { ClusterApi } from '../kube';
import { filterForDisplay, isMine } from '../model/owner';
import { splitPhase } from '../model/phases';
import {
  checkFilter,
  defaultFilterKindOf,
  defaultFilterText,
  inferWorkload,
  type DefaultFilterKind,
  type WorkloadRefText,
} from '../model/startSplit';
import type { WorkloadInfo } from '../model/types';
import { splittable } from '../model/splittable';
import { UserError } from '../notifications';
import type { Services } from '../services';
import { settings } from '../settings';
import { workloadCandidates } from '../workspace';
import { specFilter } from '../../core/crd/splitFilter';
import type { HeaderFilter } from '../../core/filter';

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
      vscode.l10n.t(
        'No Deployment or StatefulSet in this namespace declares queues (telepresence.io/queue-config).',
      ),
      vscode.l10n.t(
        'Pick the right namespace with "Queue Split: Select Context/Namespace…", or annotate your workload (see the Queue Split walkthrough).',
      ),
      [
        {
          title: vscode.l10n.t('Select Context/Namespace'),
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
        vscode.l10n.t(
          'No annotated {0} "{1}" in namespace {2}.',
          wanted.kind ?? vscode.l10n.t('workload'),
          wanted.name,
          namespace,
        ),
        vscode.l10n.t(
          'Annotated workloads here: {0}. Check the name, or the namespace with "Select Context/Namespace…".',
          workloads.map((w) => w.name).join(', '),
        ),
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
    description: `${workload.kind} · ${workload.queues.map((q) => q.name).join(', ') || vscode.l10n.t('no queues')}`,
    ...(inferredFrom !== undefined
      ? { detail: `$(lightbulb) ${vscode.l10n.t('matches {0}', inferredFrom)}` }
      : {}),
    ...(!splittable(workload)
      ? { detail: `$(warning) ${vscode.l10n.t('invalid declaration: {0}', workload.errors[0] ?? '')}` }
      : {}),
    value: workload,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Start Split (1/4): workload'),
    placeHolder: vscode.l10n.t('Workloads with a queue declaration in namespace {0}', namespace),
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
      vscode.l10n.t(
        '{0} {1} cannot be split: {2}',
        workload.kind,
        workload.name,
        workload.errors.join(' | '),
      ),
      vscode.l10n.t('Fix its telepresence.io/queue-config annotation (or the env it names), then try again.'),
    );
  const items: Item<string>[] = workload.queues.map((q) => ({
    label: q.name,
    description: `${sourceLabel(q.provider)} ${q.source}`,
    picked: preselected === undefined || preselected.includes(q.name),
    value: q.name,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Start Split (2/4): queues of {0}', workload.name),
    placeHolder: vscode.l10n.t('The queues to split (all declared ones are selected)'),
    canPickMany: true,
    ignoreFocusOut: true,
  });
  if (picked === undefined) return undefined;
  if (picked.length === 0)
    throw new UserError(vscode.l10n.t('No queue selected.'), vscode.l10n.t('Select at least one queue.'));
  return picked.map((p) => p.value);
}

/** workspaceState: which key the proposed filter used when a filter was last accepted here. */
const FILTER_KIND_KEY = 'queueSplit.defaultFilterKind';

/** The grammar in one breath (core/filter/text.ts), under the input box. */
const filterPrompt = () =>
  vscode.l10n.t(
    'Messages matching this filter come to you. key=value · key^=prefix · key~="regex" (whole value) · key in (a, b) · has(key) · "," = AND · " or " between alternatives. Keys: headers, baggage:<member>, body:$.field. The title-bar button switches to your OpenTelemetry routing key and back.',
  );

/**
 * The filter, proposed as x-queue-split-user=<me> (or, after the title-bar button or as last
 * time in this workspace, my OpenTelemetry routing key: the W3C baggage member
 * queue-split-user=<me>). Validated as typed: syntax, and overlap with live splits on the same
 * queues (model/startSplit.ts checkFilter); a filter that does not pass cannot be accepted.
 */
export async function inputFilter(
  workload: WorkloadInfo,
  queues: readonly string[],
  splits: readonly QueueSplit[],
  owner: string,
  memento?: Pick<vscode.Memento, 'get' | 'update'>,
): Promise<HeaderFilter | undefined> {
  const context = { workload: { kind: workload.kind, name: workload.name }, queues, splits, owner };
  let kind: DefaultFilterKind = memento?.get<string>(FILTER_KIND_KEY) === 'baggage' ? 'baggage' : 'header';
  const other = (k: DefaultFilterKind): DefaultFilterKind => (k === 'header' ? 'baggage' : 'header');
  const buttons: Record<DefaultFilterKind, vscode.QuickInputButton> = {
    baggage: {
      iconPath: new vscode.ThemeIcon('radio-tower'),
      tooltip: vscode.l10n.t(
        'Use my OpenTelemetry routing key (W3C baggage member, propagated by OpenTelemetry SDKs): {0}',
        defaultFilterText(owner, 'baggage'),
      ),
    },
    header: {
      iconPath: new vscode.ThemeIcon('symbol-key'),
      tooltip: vscode.l10n.t('Use the header {0}', defaultFilterText(owner, 'header')),
    },
  };
  const box = vscode.window.createInputBox();
  box.title = vscode.l10n.t('Start Split (3/4): header filter');
  box.prompt = filterPrompt();
  box.placeholder = vscode.l10n.t(
    'e.g. {0}, or tenant^={1}- or tenant in (a, b)',
    defaultFilterText(owner),
    owner,
  );
  box.value = defaultFilterText(owner, kind);
  box.buttons = [buttons[other(kind)]];
  box.ignoreFocusOut = true;
  const validate = () => {
    box.validationMessage = checkFilter(box.value, context).error;
  };
  validate();
  return new Promise<HeaderFilter | undefined>((resolve) => {
    const subscriptions = [
      box.onDidChangeValue(validate),
      box.onDidTriggerButton(() => {
        const from = defaultFilterText(owner, kind);
        kind = other(kind);
        const to = defaultFilterText(owner, kind);
        box.value = box.value.includes(from) ? box.value.replace(from, to) : to;
        box.buttons = [buttons[other(kind)]];
        validate();
      }),
      box.onDidAccept(() => {
        const result = checkFilter(box.value, context);
        if (result.filter === undefined) {
          box.validationMessage = result.error ?? vscode.l10n.t('Invalid filter.');
          return; // stays open: the message says what to change
        }
        const used = defaultFilterKindOf(result.filter);
        if (used !== undefined && memento !== undefined) void memento.update(FILTER_KIND_KEY, used);
        resolve(result.filter);
        box.hide();
      }),
      box.onDidHide(() => {
        resolve(undefined); // Escape (a no-op after an accept)
        subscriptions.forEach((d) => d.dispose());
        box.dispose();
      }),
    ];
    box.show();
  });
}

export async function chooseMode(): Promise<SidecarDeliveryMode | undefined> {
  const preferred = settings.deliveryMode();
  const modes: Item<SidecarDeliveryMode>[] = [
    {
      label: 'http',
      description: vscode.l10n.t('POST each message to your running service'),
      detail: vscode.l10n.t(
        'The sidecar consumes your session shadow and POSTs each message (CloudEvents binary mode); acked after a 2xx.',
      ),
      value: 'http',
    },
    {
      label: 'env',
      description: vscode.l10n.t('your process consumes its session shadow itself'),
      detail: vscode.l10n.t(
        'You get env overrides (source → your session shadow); a debug launch whose env names the split (QUEUE_SPLIT) merges them.',
      ),
      value: 'env',
    },
    {
      label: 'relay',
      description: vscode.l10n.t('republish into a broker you run locally'),
      detail: vscode.l10n.t('Needs {0}.', relaySettingNames().join(' / ')),
      value: 'relay',
    },
  ];
  modes.sort((a, b) => (a.value === preferred ? -1 : b.value === preferred ? 1 : 0));
  const picked = await vscode.window.showQuickPick(modes, {
    title: vscode.l10n.t('Start Split (4/4): delivery'),
    placeHolder: vscode.l10n.t('How your messages reach the process you debug'),
    ignoreFocusOut: true,
  });
  return picked?.value;
}

export async function inputHttpTarget(): Promise<string | undefined> {
  return vscode.window.showInputBox({
    title: vscode.l10n.t('Start Split: http target'),
    prompt: vscode.l10n.t('The URL of your local service the sidecar POSTs each message to'),
    value: settings.httpTarget(),
    ignoreFocusOut: true,
    validateInput: (value) => {
      try {
        const url = new URL(value);
        return url.protocol === 'http:' || url.protocol === 'https:'
          ? undefined
          : vscode.l10n.t('Use an http:// or https:// URL.');
      } catch {
        return vscode.l10n.t('Not a URL, e.g. http://127.0.0.1:8080/events');
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
      vscode.l10n.t(
        'You have no splits in namespace {0} (context {1}).',
        api.target.namespace,
        api.target.context,
      ),
      vscode.l10n.t(
        'Start one with "Queue Split: Start Split…", or name a split in a launch configuration\'s env ("Queue Split: Add Queue Split to Launch Configuration").',
      ),
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
        description: `${splitPhase(s)} · ${filterForDisplay(specFilter(s.spec), true)}`,
        detail: `${s.metadata.name}${session !== undefined ? ` · ${vscode.l10n.t('sidecar {0} in this window', session.view.stage)}` : ''}`,
        value: s.metadata.name,
      };
    }),
    { title: purpose, placeHolder: vscode.l10n.t('Which of your splits?'), ignoreFocusOut: true },
  );
  if (picked === undefined) return undefined;
  const split = byName.get(picked.value);
  return { name: picked.value, ...(split !== undefined ? { split } : {}), mine: true };
}
