// The "Queue Splits" tree as pure data: context → workloads with a queue declaration → queues →
// routes (mine and teammates'). The nodes are a discriminated union; `childrenOf` builds the
// hierarchy from one snapshot of the namespace and `lookOf` says how each node is shown. The
// TreeDataProvider only turns these into vscode.TreeItems.
import * as l10n from '@vscode/l10n';
import { PROVIDERS, sourceLabel } from '../../core/providers';
import { isEmptyFilter } from '../../core/filter';
import { handbackUnfinished } from '../../core/workloadStatus';
import { blockedDetail, blockedOn, blockedText } from './blocked';
import { lingerText } from './linger';
import { filterForDisplay, isMine } from './owner';
import { blockingReason, countsText, phaseLook, queuePhase } from './phases';
import { totalDelivered, type SessionView } from './sidecarView';
import type { DeclaredQueue, KubeTargetInfo, QueueSplit, WorkloadInfo } from './types';
import { specFilter } from '../../core/crd/splitFilter';

export interface ContextNode {
  kind: 'context';
  id: string;
  target: KubeTargetInfo;
}

/** One namespace of several the view shows (model/namespaces.ts); its workloads load when expanded. */
export interface NamespaceNode {
  kind: 'namespace';
  id: string;
  context: string;
  namespace: string;
  /** The selected namespace (where palette commands and debug launches act). */
  selected: boolean;
  /** Why this namespace cannot be shown (its watch failed: a 403, …), as of the last redraw. */
  error?: { message: string; suggestedAction?: string };
  /** How many workloads with a queue declaration, once its watch listed them. */
  workloads?: number;
}

export interface WorkloadNode {
  kind: 'workload';
  id: string;
  workload: WorkloadInfo;
  /** True when no annotated workload of this name exists but splits still reference it. */
  undeclared: boolean;
}

/** A queue of a workload: as declared, or only as a split still names it (its declaration is
 * gone, so nothing says which provider it is on). */
export type QueueNode = { kind: 'queue'; id: string; workload: WorkloadInfo } & (
  { queue: DeclaredQueue; undeclared: false } | { queue: { name: string }; undeclared: true }
);

export interface RouteNode {
  kind: 'route';
  id: string;
  split: QueueSplit;
  queue: string;
  mine: boolean;
  session?: SessionView;
  /** This window's split lingers after its last debug session: ms until it stops. */
  lingerLeftMs?: number;
  /** Now, for how long a block has lasted (the snapshot's time). */
  now?: number;
}

export interface NoticeNode {
  kind: 'notice';
  id: string;
  text: string;
  detail?: string;
  severity: 'info' | 'warning' | 'error';
}

export type TreeNode = ContextNode | NamespaceNode | WorkloadNode | QueueNode | RouteNode | NoticeNode;

export function namespaceNode(
  target: KubeTargetInfo,
  namespace: string,
  facts: Pick<NamespaceNode, 'error' | 'workloads'> = {},
): NamespaceNode {
  return {
    kind: 'namespace',
    id: `ns:${target.context}/${namespace}`,
    context: target.context,
    namespace,
    selected: namespace === target.namespace,
    ...facts,
  };
}

/** The namespace a row acts in (a command run from its right-click menu); undefined: the selected one. */
export function namespaceOfNode(node: TreeNode | undefined): string | undefined {
  switch (node?.kind) {
    case 'namespace':
      return node.namespace;
    case 'workload':
    case 'queue':
      return node.workload.namespace || undefined;
    case 'route':
      return node.split.metadata.namespace;
    default:
      return undefined;
  }
}

/** Everything the tree shows for one context/namespace at one moment. */
export interface TreeSnapshot {
  target: KubeTargetInfo;
  owner: string;
  /** Annotated workloads (valid or not). */
  workloads: readonly WorkloadInfo[];
  splits: readonly QueueSplit[];
  /** Sidecars this window runs, by QueueSplit name. */
  sessions: ReadonlyMap<string, SessionView>;
  /** Splits of this window that linger after their last debug session: ms left, by name. */
  lingering?: ReadonlyMap<string, number>;
  /** Set while the watches have not delivered their first list. */
  loading?: boolean;
  /** When the snapshot was taken (ms since the epoch); default: when it is shown. */
  now?: number;
}

const workloadKey = (kind: string, name: string) => `${kind}/${name}`;

export function contextNode(target: KubeTargetInfo): ContextNode {
  return { kind: 'context', id: `ctx:${target.context}/${target.namespace}`, target };
}

/** Workloads to show: the annotated ones plus any a split still references. */
export function workloadsOf(snapshot: TreeSnapshot): WorkloadNode[] {
  const byKey = new Map<string, WorkloadNode>();
  const ns = snapshot.target.namespace;
  for (const workload of snapshot.workloads) {
    byKey.set(workloadKey(workload.kind, workload.name), {
      kind: 'workload',
      id: `wl:${ns}/${workloadKey(workload.kind, workload.name)}`,
      workload,
      undeclared: false,
    });
  }
  for (const split of snapshot.splits) {
    const { kind, name } = split.spec.workload;
    const key = workloadKey(kind, name);
    if (byKey.has(key)) continue;
    byKey.set(key, {
      kind: 'workload',
      id: `wl:${ns}/${key}`,
      workload: { kind, name, namespace: ns, queues: [], errors: [] },
      undeclared: true,
    });
  }
  return [...byKey.values()].sort((a, b) =>
    a.workload.name === b.workload.name
      ? a.workload.kind.localeCompare(b.workload.kind)
      : a.workload.name.localeCompare(b.workload.name),
  );
}

function splitsOfWorkload(snapshot: TreeSnapshot, workload: WorkloadInfo): QueueSplit[] {
  return snapshot.splits.filter(
    (s) => s.spec.workload.kind === workload.kind && s.spec.workload.name === workload.name,
  );
}

export function queuesOf(snapshot: TreeSnapshot, node: WorkloadNode): (QueueNode | NoticeNode)[] {
  const { workload } = node;
  const out: (QueueNode | NoticeNode)[] = [];
  const seen = new Set<string>();
  for (const queue of workload.queues) {
    seen.add(queue.name);
    out.push({ kind: 'queue', id: `${node.id}/q:${queue.name}`, workload, queue, undeclared: false });
  }
  // Queues a split names that the declaration no longer has: still shown, so the route can be stopped.
  for (const split of splitsOfWorkload(snapshot, workload)) {
    for (const name of split.spec.queues) {
      if (seen.has(name)) continue;
      seen.add(name);
      out.push({
        kind: 'queue',
        id: `${node.id}/q:${name}`,
        workload,
        queue: { name },
        undeclared: true,
      });
    }
  }
  // The controller's word on the workload outlives its last split: a handback that waits or is
  // stuck is shown even when no QueueSplit is left to carry the reason (core/workloadStatus.ts).
  const status = workload.splitStatus;
  if (status !== undefined && handbackUnfinished(status)) {
    out.unshift({
      kind: 'notice',
      id: `${node.id}/handback`,
      text:
        status.phase === 'Degraded'
          ? l10n.t('Degraded: waiting for an operator retry')
          : status.phase === 'RollingBack'
            ? l10n.t('Rolling back a failed activation')
            : l10n.t('Handing the workload back'),
      detail: [status.message, ...(status.nextAction !== undefined ? [status.nextAction] : [])].join('\n'),
      severity: status.phase === 'Degraded' ? 'error' : 'warning',
    });
  }
  if (workload.errors.length > 0) {
    out.unshift({
      kind: 'notice',
      id: `${node.id}/invalid`,
      text: l10n.t('The queue declaration is invalid'),
      detail: workload.errors.join('\n'),
      severity: 'error',
    });
  }
  return out;
}

export function routesOf(snapshot: TreeSnapshot, node: QueueNode): RouteNode[] {
  return splitsOfWorkload(snapshot, node.workload)
    .filter((s) => s.spec.queues.includes(node.queue.name))
    .map((split): RouteNode =>
      asOf(snapshot, {
        kind: 'route',
        id: `route:${split.metadata.namespace ?? snapshot.target.namespace}/${split.metadata.name}/${node.queue.name}`,
        split,
        queue: node.queue.name,
        mine: isMine(split, snapshot.owner),
      }),
    )
    .sort((a, b) => {
      if (a.mine !== b.mine) return a.mine ? -1 : 1;
      const rank =
        phaseLook(queuePhase(a.split, a.queue)).rank - phaseLook(queuePhase(b.split, b.queue)).rank;
      return rank !== 0 ? rank : a.split.spec.owner.localeCompare(b.split.spec.owner);
    });
}

export function childrenOf(snapshot: TreeSnapshot, node: TreeNode): TreeNode[] {
  switch (node.kind) {
    case 'context':
    case 'namespace': {
      const workloads = workloadsOf(snapshot);
      if (workloads.length > 0) return workloads;
      return [
        {
          kind: 'notice',
          id: `${node.id}/empty`,
          text: snapshot.loading ? l10n.t('Loading…') : l10n.t('No workload here declares queues'),
          severity: 'info',
        },
      ];
    }
    case 'workload':
      return queuesOf(snapshot, node);
    case 'queue':
      return routesOf(snapshot, node);
    case 'route':
    case 'notice':
      return [];
  }
}

/** The workload's split phase in words (localized when shown; the keys are the API's). */
const workloadPhaseText = (
  phase: 'Splitting' | 'Split' | 'RollingBack' | 'HandingBack' | 'Degraded' | 'HandedBack',
) =>
  ({
    Splitting: l10n.t('splitting'),
    Split: l10n.t('split'),
    RollingBack: l10n.t('rolling back'),
    HandingBack: l10n.t('handing back'),
    Degraded: 'Degraded',
    HandedBack: l10n.t('handed back'),
  })[phase];

export interface NodeLook {
  label: string;
  description?: string;
  /** Markdown. */
  tooltip: string;
  icon: { id: string; color?: string };
  /** For `view/item/context` menus: context, workload, queue, route.mine (route.mine.blocked
   * while a message of it keeps failing), route.teammate, notice. */
  contextValue: string;
  collapsible: 'none' | 'collapsed' | 'expanded';
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}

export function routeQueueCounts(
  split: QueueSplit,
  queue: string,
): { delivered?: number; lag?: number; sourceBacklog?: number } {
  const status = split.status?.queues?.find((q) => q.name === queue);
  return {
    ...(status?.delivered !== undefined ? { delivered: status.delivered } : {}),
    ...(status?.lag !== undefined ? { lag: status.lag } : {}),
    ...(status?.sourceBacklog !== undefined ? { sourceBacklog: status.sourceBacklog } : {}),
  };
}

export function lookOf(snapshot: TreeSnapshot, node: TreeNode): NodeLook {
  switch (node.kind) {
    case 'context': {
      const { target } = node;
      const pinned = target.contextFrom === 'pinned' || target.namespaceFrom === 'pinned';
      const from = contextFromText(target);
      return {
        label: target.context,
        description: `${l10n.t('namespace {0}', target.namespace)}${from !== undefined ? ` · ${from}` : ''}`,
        tooltip: [
          `**${l10n.t('Context')}** ${escapeMarkdown(target.context)}${contextFromDetail(target)}`,
          `**${l10n.t('Namespace')}** ${escapeMarkdown(target.namespace)}${namespaceFromDetail(target)}`,
          ...(target.server !== undefined
            ? [`**${l10n.t('Server')}** ${escapeMarkdown(target.server)}`]
            : []),
          '',
          pinned
            ? l10n.t(
                'Change with *Queue Split: Select Context/Namespace…*; *Queue Split: Unpin Context* follows the kubeconfig again',
              )
            : l10n.t('Pin another with *Queue Split: Select Context/Namespace…*'),
        ].join('\n\n'),
        icon: { id: pinned ? 'pinned' : 'cloud' },
        contextValue: pinned ? 'context.pinned' : 'context',
        collapsible: 'expanded',
      };
    }
    case 'namespace':
      // The words (selected, the error, counts) are the view's, in the user's language
      // (tree/provider.ts); this is the part that is only data.
      return {
        label: node.namespace,
        tooltip: escapeMarkdown(node.namespace),
        icon:
          node.error !== undefined ? { id: 'error', color: 'errorForeground' } : { id: 'symbol-namespace' },
        contextValue: node.error !== undefined ? 'namespace.error' : 'namespace',
        // The selected namespace opens as the flat tree did; the others load when expanded.
        collapsible: node.selected ? 'expanded' : 'collapsed',
      };
    case 'workload': {
      const { workload } = node;
      const routes = splitsOfWorkload(snapshot, workload);
      const mine = routes.filter((s) => isMine(s, snapshot.owner)).length;
      const parts: string[] = [workload.kind];
      if (node.undeclared) parts.push(l10n.t('no queue declaration'));
      else
        parts.push(
          workload.queues.length === 1 ? l10n.t('1 queue') : l10n.t('{0} queues', workload.queues.length),
        );
      if (routes.length > 0)
        parts.push(
          `${routes.length === 1 ? l10n.t('1 split') : l10n.t('{0} splits', routes.length)}${mine > 0 ? ` ${l10n.t('({0} mine)', mine)}` : ''}`,
        );
      const invalid = workload.errors.length > 0;
      const status = workload.splitStatus;
      const unfinished = handbackUnfinished(status);
      if (status !== undefined && (unfinished || routes.length === 0) && status.phase !== 'Split')
        parts.push(workloadPhaseText(status.phase));
      return {
        label: workload.name,
        description: parts.join(' · '),
        tooltip: [
          l10n.t(
            '**{0}** {1} in {2}',
            workload.kind,
            escapeMarkdown(workload.name),
            escapeMarkdown(workload.namespace),
          ),
          ...(invalid
            ? [
                '',
                `**${l10n.t('Declaration problems:')}**`,
                ...workload.errors.map((e) => `- ${escapeMarkdown(e)}`),
              ]
            : []),
          ...(node.undeclared
            ? ['', l10n.t('Splits still reference this workload, but it has no valid queue declaration now.')]
            : []),
          ...(status !== undefined
            ? [
                '',
                `**${l10n.t('Split status')}** ${workloadPhaseText(status.phase)} — ${escapeMarkdown(status.message)}`,
                ...(status.nextAction !== undefined
                  ? ['', `**${l10n.t('Next')}** ${escapeMarkdown(status.nextAction)}`]
                  : []),
                '',
                `*${l10n.t('as of {0}', escapeMarkdown(status.updated))}*`,
              ]
            : []),
        ].join('\n'),
        icon:
          invalid || node.undeclared || unfinished
            ? { id: 'warning', color: 'list.warningForeground' }
            : { id: 'server-process' },
        contextValue: invalid || node.undeclared ? 'workload.invalid' : 'workload',
        collapsible: 'expanded',
      };
    }
    case 'queue': {
      const routes = routesOf(snapshot, node);
      const routeCount =
        routes.length === 0
          ? l10n.t('no routes')
          : routes.length === 1
            ? l10n.t('1 route')
            : l10n.t('{0} routes', routes.length);
      // Always expanded: an item that starts without children and gets some later (the first
      // route) would otherwise stay collapsed, VS Code remembering its state by id.
      if (node.undeclared) {
        return {
          label: node.queue.name,
          description: `${l10n.t('not declared any more')} · ${routeCount}`,
          tooltip: l10n.t(
            'Queue **{0}** is named by a split but not declared by {1} any more.',
            escapeMarkdown(node.queue.name),
            escapeMarkdown(node.workload.name),
          ),
          icon: { id: 'warning', color: 'list.warningForeground' },
          contextValue: 'queue.undeclared',
          collapsible: 'expanded',
        };
      }
      const { queue } = node;
      return {
        label: queue.name,
        description: `${queue.provider} · ${queue.source} · ${routeCount}`,
        tooltip: [
          `**${escapeMarkdown(queue.name)}** (${sourceLabel(queue.provider)} ${escapeMarkdown(queue.source)})`,
          l10n.t('container {0}', escapeMarkdown(queue.container)),
        ].join('\n\n'),
        icon: { id: PROVIDERS[queue.provider].icon },
        contextValue: 'queue',
        collapsible: 'expanded',
      };
    }
    case 'route':
      return routeLook(asOf(snapshot, node));
    case 'notice':
      return {
        label: node.text,
        ...(node.detail !== undefined ? { description: node.detail.split('\n')[0] } : {}),
        tooltip: node.detail !== undefined ? escapeMarkdown(node.detail) : escapeMarkdown(node.text),
        icon:
          node.severity === 'error'
            ? { id: 'error', color: 'errorForeground' }
            : node.severity === 'warning'
              ? { id: 'warning', color: 'list.warningForeground' }
              : { id: 'info' },
        contextValue: 'notice',
        collapsible: 'none',
      };
  }
}

/**
 * A route row as of `snapshot`: its session, linger and time from the snapshot. A row redrawn
 * alone (a session's change) is the node VS Code got earlier, with the session of then.
 */
function asOf(snapshot: TreeSnapshot, node: RouteNode): RouteNode {
  const { session: _session, lingerLeftMs: _linger, now: _now, ...rest } = node;
  const session = snapshot.sessions.get(node.split.metadata.name);
  const lingerLeftMs = snapshot.lingering?.get(node.split.metadata.name);
  return {
    ...rest,
    ...(session !== undefined ? { session } : {}),
    ...(lingerLeftMs !== undefined ? { lingerLeftMs } : {}),
    ...(snapshot.now !== undefined ? { now: snapshot.now } : {}),
  };
}

function routeLook(node: RouteNode): NodeLook {
  const { split, queue, mine, session, lingerLeftMs } = node;
  const phase = queuePhase(split, queue);
  const look = phaseLook(phase);
  const { delivered, lag, sourceBacklog } = routeQueueCounts(split, queue);
  const filter = filterForDisplay(specFilter(split.spec), mine);
  const counts = countsText(delivered, lag, sourceBacklog);
  // The source outgrows the queue-agent (docs/design.md "The lag a split adds"): said in the
  // tooltip, since the split itself works and the safe action is the developer's to take.
  const behind = split.status?.conditions?.find((c) => c.type === 'FallingBehind' && c.status === 'True');
  const linger = lingerLeftMs !== undefined ? lingerText(lingerLeftMs) : '';
  // A message of this queue keeps failing: said first, since everything behind it waits.
  const blocked = mine ? blockedOn(session, queue) : [];
  const first = blocked[0];
  const block =
    first !== undefined
      ? `${blockedText(first)}${blocked.length > 1 ? ` (+${blocked.length - 1})` : ''}`
      : '';
  const description = [phase, block, linger, filter, counts].filter((p) => p !== '').join(' · ');
  const rejected = session !== undefined ? (session.rejected[queue] ?? 0) : 0;
  const { reason, nextAction } = blockingReason(split);
  const tooltip = [
    `**${mine ? l10n.t('Your split') : l10n.t('Split of {0}', escapeMarkdown(split.spec.owner))}** — ${escapeMarkdown(split.metadata.name)}`,
    `**${l10n.t('Phase')}** ${phase}${reason !== undefined ? ` — ${escapeMarkdown(reason)}` : ''}`,
    ...blocked.map((b) =>
      l10n.t(
        '**Blocked** — {0}. *Retry Blocked Message Now* or *Reject Blocked Message…* (right-click).',
        escapeMarkdown(blockedDetail(b, node.now ?? Date.now())),
      ),
    ),
    ...(nextAction !== undefined ? [`**${l10n.t('Next')}** ${escapeMarkdown(nextAction)}`] : []),
    ...(behind !== undefined ? [`**${l10n.t('Falling behind')}** ${escapeMarkdown(behind.message)}`] : []),
    `**${l10n.t('Filter')}** ${escapeMarkdown(filter)}${isEmptyFilter(specFilter(split.spec)) ? ` ${l10n.t('(exclusive)')}` : ''}`,
    `**${l10n.t('Routed here')}** ${delivered ?? 0}${lag !== undefined ? ` · **${l10n.t('lag')}** ${lag}` : ''}`,
    ...(split.spec.delivery !== undefined ? [`**${l10n.t('Delivery')}** ${split.spec.delivery.mode}`] : []),
    ...(session !== undefined
      ? [
          `**${l10n.t('Sidecar')}** ${session.stage}${session.pid !== undefined ? ` ${l10n.t('(pid {0})', session.pid)}` : ''} · ${l10n.t('handed to your process: {0}', totalDelivered(session))}${rejected > 0 ? ` · ${l10n.t('rejected: {0}', rejected)}` : ''}`,
          ...(linger !== ''
            ? [
                l10n.t(
                  '**No debug session** — {0}; a new debug session keeps it (the pods are not restarted again). Stop Split stops it now.',
                  linger,
                ),
              ]
            : []),
        ]
      : mine
        ? [
            `*${l10n.t('No sidecar in this window: the split lives until its lease runs out or you stop it.')}*`,
          ]
        : []),
  ].join('\n\n');
  return {
    label: mine ? l10n.t('{0} (you)', split.spec.owner) : split.spec.owner,
    description,
    tooltip,
    icon:
      first !== undefined
        ? { id: 'warning', color: 'list.warningForeground' }
        : { id: look.icon, ...(look.color !== undefined ? { color: look.color } : {}) },
    contextValue: mine ? (first !== undefined ? 'route.mine.blocked' : 'route.mine') : 'route.teammate',
    collapsible: 'none',
  };
}

/** Who chose the context, in a few words: "pinned", "kubeconfig's current", "setting". */
export function contextFromText(target: KubeTargetInfo): string | undefined {
  switch (target.contextFrom) {
    case 'pinned':
      return l10n.t('pinned');
    case 'setting':
      return 'queueSplit.context';
    case 'kubeconfig':
      return target.namespaceFrom === 'pinned' ? l10n.t('namespace pinned') : l10n.t("kubeconfig's current");
    case undefined:
      return undefined;
  }
}

function contextFromDetail(target: KubeTargetInfo): string {
  switch (target.contextFrom) {
    case 'pinned':
      return ` — ${l10n.t("pinned for this workspace (it stays when the kubeconfig's current context changes)")}`;
    case 'setting':
      return ` — ${l10n.t('the queueSplit.context setting')}`;
    case 'kubeconfig':
      return ` — ${l10n.t("the kubeconfig's current context (followed: `kubectl config use-context` switches it here too)")}`;
    case undefined:
      return '';
  }
}

function namespaceFromDetail(target: KubeTargetInfo): string {
  switch (target.namespaceFrom) {
    case 'pinned':
      return ` — ${l10n.t('pinned for this workspace')}`;
    case 'setting':
      return ` — ${l10n.t('the queueSplit.namespace setting')}`;
    case 'context':
      return ` — ${l10n.t("the context's namespace in the kubeconfig")}`;
    case 'default':
      return ` — ${l10n.t('the context sets none')}`;
    case undefined:
      return '';
  }
}
