// "Show Split Details": one split as a person reads it — its phase, what it waits on, the next
// action as a button, its routes and counts, this window's sidecar, the workload's word and the
// recent Kubernetes Events. Pure: a view model from what the extension knows, and the HTML of the
// webview from the view model (every value escaped; script and styles only under the panel's CSP).
// What it never shows: a teammate's filter values (they are their header values), and no message
// header or body at all (a blocked message is named by its id and its failure only).
import * as l10n from '@vscode/l10n';
import { isEmptyFilter } from '../../core/filter';
import { sourceLabel } from '../../core/providers';
import { specFilter } from '../../core/crd/splitFilter';
import { retryHint } from '../../core/state/operatorRetry';
import type { WorkloadSplitStatus } from '../../core/workloadStatus';
import { blockedText } from './blocked';
import { lingerText } from './linger';
import { filterForDisplay, filterKeys } from './owner';
import { blockingReason, queuePhase, splitPhase } from './phases';
import { totalDelivered, type SessionView } from './sidecarView';
import { warningWords } from './sidecarWords';
import type { QueueSplit, WorkloadInfo } from './types';

/** How a phase or a line is coloured (theme colours, see media/details.css). */
export type Tone = 'ok' | 'progress' | 'warning' | 'error' | 'muted';

/** What a button asks the extension to do; the webview sends only this id (details.ts maps it). */
export type DetailsActionId =
  'stop' | 'retry' | 'reject' | 'sendTest' | 'copyRetry' | 'startSplit' | 'openManifest' | 'logs' | 'refresh';

export interface DetailsAction {
  id: DetailsActionId;
  label: string;
  /** The next action: drawn as the primary button. */
  primary: boolean;
  /** Hover text. */
  title?: string;
}

/** One Kubernetes Event of the split or its workload (kube/events.ts reads them). */
export interface EventLine {
  /** RFC 3339; the latest occurrence. */
  time?: string;
  type: string;
  reason: string;
  /** `Deployment/orders-app`, `QueueSplit/qs-…`. */
  object: string;
  message: string;
  count?: number;
}

export type EventsView =
  | { state: 'loading' }
  /** The developer's role may not list Events (or the list failed): why, and the view goes on. */
  | { state: 'unavailable'; reason: string }
  | { state: 'listed'; events: EventLine[] };

export interface DetailsInput {
  name: string;
  namespace: string;
  context: string;
  /** Undefined: deleted (and drained), never existed, or not readable (`readError`). */
  split?: QueueSplit;
  /** Why the split could not be read this time (the last known one is shown if any). */
  readError?: string;
  /** The split is the user's own (their filter values may be shown, Stop offered). */
  mine: boolean;
  /** This window's sidecar for it. */
  session?: SessionView;
  /** This window's split lingers after its last debug session: ms until it stops. */
  lingerLeftMs?: number;
  /** The annotated workload (queue sources, the controller's word on the workload). */
  workload?: WorkloadInfo;
  /** The other splits of the same workload (teammates', or mine of another window). */
  others?: readonly QueueSplit[];
  /** Whose splits are mine, to tell the others apart; undefined when not known. */
  owner?: string;
  events: EventsView;
  /** Workspace-relative path of a manifest that declares the workload. */
  manifest?: string;
  /** Set when the view no longer follows the cluster (another context or namespace is selected). */
  stale?: string;
  now: number;
}

export interface Fact {
  label: string;
  value: string;
  /** Code-like text (names, filters): monospace. */
  code?: boolean;
}

export interface RouteRow {
  queue: string;
  /** `RabbitMQ queue orders-q`, when the declaration says. */
  source?: string;
  phase: string;
  tone: Tone;
  /** The session shadow the queue-agent routes my messages to. */
  shadow?: string;
  /** Where the sidecar hands them (`http://127.0.0.1:8080/`, `env`, a local queue). */
  deliversTo?: string;
  routed?: number;
  lag?: number;
  /** Waiting in the source for the queue-agent to copy: the application's lag from the split. */
  sourceBacklog?: number;
  handed?: number;
  failed?: number;
  rejected?: number;
  blocked?: string;
}

export interface ConditionRow {
  type: string;
  status: string;
  reason: string;
  message: string;
  since?: string;
  tone: Tone;
}

export interface OtherRoute {
  owner: string;
  queues: string;
  phase: string;
  tone: Tone;
  filter: string;
}

export interface DetailsModel {
  /** The panel's tab title. */
  title: string;
  name: string;
  heading: string;
  subheading: string;
  phase: { text: string; tone: Tone };
  /** What the controller says the split waits on (or why it stopped). */
  waitingOn?: string;
  next?: { text: string; action?: DetailsAction };
  /** Every button, the next action's first. */
  actions: DetailsAction[];
  notes: string[];
  facts: Fact[];
  routes: RouteRow[];
  counts: Fact[];
  conditions: ConditionRow[];
  sidecar?: { facts: Fact[]; error?: string; warnings: { time: string; code: string; message: string }[] };
  workloadStatus?: { phase: string; tone: Tone; message: string; nextAction?: string; updated: string };
  others: OtherRoute[];
  events: EventsView;
}

const PHASE_TONES: Record<string, Tone> = {
  Active: 'ok',
  Pending: 'progress',
  Preparing: 'progress',
  Draining: 'progress',
  Degraded: 'warning',
  Rejected: 'error',
  Failed: 'error',
  Stopped: 'muted',
};

export function phaseTone(phase: string): Tone {
  return PHASE_TONES[phase] ?? 'muted';
}

const WORKLOAD_TONES: Record<WorkloadSplitStatus['phase'], Tone> = {
  Splitting: 'progress',
  Split: 'ok',
  RollingBack: 'warning',
  HandingBack: 'progress',
  Degraded: 'warning',
  HandedBack: 'muted',
};

/** "12 s ago", "3 min ago", "2 h ago", "4 d ago"; "in 40 s" for a time ahead. */
export function relativeTime(iso: string | undefined, now: number): string | undefined {
  if (iso === undefined) return undefined;
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return undefined;
  const seconds = Math.round((now - at) / 1000);
  const abs = Math.abs(seconds);
  const amount =
    abs < 60
      ? `${abs} s`
      : abs < 3600
        ? `${Math.floor(abs / 60)} min`
        : abs < 86_400
          ? `${Math.floor(abs / 3600)} h`
          : `${Math.floor(abs / 86_400)} d`;
  return seconds >= 0 ? `${amount} ago` : `in ${amount}`;
}

const action = (id: DetailsActionId, label: string, primary: boolean, title?: string): DetailsAction => ({
  id,
  label,
  primary,
  ...(title !== undefined ? { title } : {}),
});

/** What the person should do now (the primary button), from the phase and this window's sidecar. */
function nextStep(input: DetailsInput, phase: string): DetailsModel['next'] {
  const { split, session, mine } = input;
  if (split === undefined) {
    if (input.readError !== undefined)
      return { text: input.readError, action: action('refresh', l10n.t('Refresh'), true) };
    return {
      text: l10n.t(
        'This split is gone: it was stopped and its route drained back to the app, or it never existed.',
      ),
      ...(mine ? { action: action('startSplit', l10n.t('Start Split…'), true) } : {}),
    };
  }
  const nextAction = split.status?.nextAction;
  const blocked = mine ? (session?.blocked ?? []) : [];
  const first = blocked[0];
  if (first !== undefined)
    return {
      text: l10n.t(
        "Message {0} of {1} keeps failing ({2}, attempt {3}) and the messages behind it wait: retry it now, or reject it as your app's own reject would.",
        first.messageId,
        first.queue,
        first.reason,
        first.attempt,
      ),
      action: action(
        'retry',
        l10n.t('Retry Now'),
        true,
        l10n.t('Retry the blocked message at once (ends its backoff wait)'),
      ),
    };
  if (mine && session?.stage === 'failed')
    return {
      text: l10n.t(
        "This window's sidecar for it stopped: {0} Its route drains back to the app when the lease runs out; stop it now, or start the split again.",
        session.error !== undefined
          ? `${session.error.message} ${session.error.suggestedAction}`
          : session.message,
      ),
      action: action(
        'logs',
        l10n.t('Show Logs'),
        true,
        l10n.t('The Queue Split log (sidecar lines included)'),
      ),
    };
  switch (phase) {
    case 'Degraded':
      return {
        text:
          nextAction ?? l10n.t('Nothing was lost. Fix the cause named above, then ask an operator to retry.'),
        action: action(
          'copyRetry',
          l10n.t('Copy Retry Command'),
          true,
          l10n.t(
            "Copies the operator's retry: {0}",
            retryHint({ ...split.spec.workload, namespace: input.namespace }),
          ),
        ),
      };
    case 'Rejected':
    case 'Failed':
      return {
        text:
          nextAction ??
          l10n.t(
            'Read the reason above, fix it, then delete this split and start a corrected one (its spec is immutable).',
          ),
        ...(mine && split.metadata.deletionTimestamp === undefined
          ? {
              action: action(
                'stop',
                l10n.t('Delete Split'),
                true,
                l10n.t('Delete this QueueSplit (the controller cleans up)'),
              ),
            }
          : {}),
      };
    case 'Active': {
      if (!mine) return nextAction !== undefined ? { text: nextAction } : undefined;
      const linger =
        input.lingerLeftMs !== undefined
          ? ` ${l10n.t('No debug session uses it now: {0}, unless a debug session takes it.', lingerText(input.lingerLeftMs))}`
          : '';
      const where = deliveryTargets(session);
      return {
        text: `${where ?? l10n.t('Messages that match your filter reach your session shadow.')} Send a test message to see one arrive.${linger}`,
        action: action('sendTest', l10n.t('Send Test Message…'), true),
      };
    }
    case 'Draining':
      return {
        text:
          nextAction ?? l10n.t('Nothing to do: the route drains back to the app, then the split is gone.'),
      };
    case 'Stopped':
      return { text: nextAction ?? l10n.t('The split has stopped.') };
    default:
      return {
        text:
          nextAction ??
          l10n.t('Nothing to do yet: the controller is setting up the route (the app rolls once).'),
      };
  }
}

function deliveryTargets(session: SessionView | undefined): string | undefined {
  const queues = session?.ready?.queues;
  if (queues === undefined || queues.length === 0) return undefined;
  const targets = [...new Set(queues.map((q) => q.deliversTo))];
  if (targets.length === 1 && targets[0] === 'env')
    return l10n.t('Messages that match your filter wait in your session shadow, which your process reads.');
  return l10n.t('Messages that match your filter reach you: {0}.', targets.join(', '));
}

function routeRows(input: DetailsInput): RouteRow[] {
  const { split, session, workload, mine } = input;
  if (split === undefined) return [];
  return split.spec.queues.map((queue): RouteRow => {
    const status = split.status?.queues?.find((q) => q.name === queue);
    const declared = workload?.queues.find((q) => q.name === queue);
    const ready = session?.ready?.queues.find((q) => q.name === queue);
    const phase = queuePhase(split, queue);
    const blocked = mine ? (session?.blocked ?? []).filter((b) => b.queue === queue) : [];
    const shadow = status?.shadow?.source ?? ready?.shadow;
    return {
      queue,
      ...(declared !== undefined ? { source: `${sourceLabel(declared.provider)} ${declared.source}` } : {}),
      phase,
      tone: blocked.length > 0 ? 'warning' : phaseTone(phase),
      ...(shadow !== undefined ? { shadow } : {}),
      ...(ready !== undefined ? { deliversTo: ready.deliversTo } : {}),
      ...(status?.delivered !== undefined ? { routed: status.delivered } : {}),
      ...(status?.lag !== undefined ? { lag: status.lag } : {}),
      ...(status?.sourceBacklog !== undefined ? { sourceBacklog: status.sourceBacklog } : {}),
      ...(session !== undefined && session.mode !== 'env'
        ? {
            handed: session.delivered[queue] ?? 0,
            failed: session.failed[queue] ?? 0,
            rejected: session.rejected[queue] ?? 0,
          }
        : {}),
      ...(blocked[0] !== undefined
        ? { blocked: `${blockedText(blocked[0])}${blocked.length > 1 ? ` (+${blocked.length - 1})` : ''}` }
        : {}),
    };
  });
}

function sum(values: Record<string, number>): number {
  return Object.values(values).reduce((a, b) => a + b, 0);
}

export function detailsModel(input: DetailsInput): DetailsModel {
  const { split, session, mine, now } = input;
  const workloadName = split?.spec.workload.name ?? input.workload?.name;
  const queues = split?.spec.queues.join(', ');
  const phase = split !== undefined ? splitPhase(split) : input.readError !== undefined ? 'Unknown' : 'Gone';
  const { reason } = split !== undefined ? blockingReason(split) : { reason: undefined };
  const next = nextStep(input, phase);

  const actions: DetailsAction[] = [];
  if (next?.action !== undefined) actions.push(next.action);
  const add = (a: DetailsAction) => {
    if (!actions.some((b) => b.id === a.id)) actions.push(a);
  };
  if (mine && split !== undefined) {
    if ((session?.blocked.length ?? 0) > 0)
      add(
        action(
          'reject',
          l10n.t('Reject…'),
          false,
          l10n.t('Reject the blocked message (asks first, says what it does)'),
        ),
      );
    if (split.metadata.deletionTimestamp === undefined)
      add(
        action(
          'stop',
          l10n.t('Stop Split'),
          false,
          l10n.t('Stop delivering and drain the route back to the app'),
        ),
      );
  }
  if (input.manifest !== undefined)
    add(action('openManifest', l10n.t('Open Workload Manifest'), false, `Open ${input.manifest}`));
  add(action('logs', l10n.t('Show Logs'), false, l10n.t('The Queue Split log (sidecar lines included)')));
  add(action('refresh', l10n.t('Refresh'), false, l10n.t('Read the split and its events again')));

  const notes: string[] = [];
  if (input.stale !== undefined) notes.push(input.stale);
  if (input.readError !== undefined && split !== undefined)
    notes.push(l10n.t('Showing the last known state: {0}', input.readError));
  if (split !== undefined && !mine)
    notes.push(
      l10n.t(
        'Filter values of other owners are hidden (they are their header values): {0}.',
        filterKeys(specFilter(split.spec)),
      ),
    );

  const facts: Fact[] = [];
  if (split !== undefined) {
    const filter = specFilter(split.spec);
    facts.push(
      { label: l10n.t('Owner'), value: mine ? l10n.t('{0} (you)', split.spec.owner) : split.spec.owner },
      {
        label: l10n.t('Workload'),
        value: `${split.spec.workload.kind} ${split.spec.workload.name}`,
        code: true,
      },
      { label: l10n.t('Queues'), value: split.spec.queues.join(', '), code: true },
      {
        label: l10n.t('Filter'),
        value: isEmptyFilter(filter)
          ? l10n.t('{0} (exclusive: the whole queue)', filterForDisplay(filter, mine))
          : filterForDisplay(filter, mine),
        code: true,
      },
    );
    if (split.spec.delivery !== undefined)
      facts.push({ label: l10n.t('Delivery'), value: split.spec.delivery.mode });
    const created = relativeTime(split.metadata.creationTimestamp, now);
    if (created !== undefined) facts.push({ label: l10n.t('Created'), value: created });
    const renewed = relativeTime(split.spec.lease.renewTime, now);
    facts.push({
      label: l10n.t('Lease'),
      value: l10n.t(
        'renewed {0}; drains {1} s after the last renewal',
        renewed ?? split.spec.lease.renewTime,
        split.spec.lease.durationSeconds,
      ),
    });
    if (input.lingerLeftMs !== undefined)
      facts.push({ label: l10n.t('Linger'), value: lingerText(input.lingerLeftMs) });
  }
  facts.push(
    { label: l10n.t('QueueSplit'), value: input.name, code: true },
    { label: l10n.t('Namespace'), value: input.namespace, code: true },
    { label: l10n.t('Context'), value: input.context, code: true },
  );

  const counts: Fact[] = [];
  if (split !== undefined) {
    counts.push({ label: l10n.t('Routed to this split'), value: String(split.status?.delivered ?? 0) });
    if (split.status?.lag !== undefined)
      counts.push({ label: l10n.t('Not yet consumed (lag)'), value: String(split.status.lag) });
  }
  if (session !== undefined && session.mode !== 'env') {
    counts.push({ label: l10n.t('Handed to your process'), value: String(totalDelivered(session)) });
    const failed = sum(session.failed);
    const rejected = sum(session.rejected);
    if (failed > 0) counts.push({ label: l10n.t('Failed attempts'), value: String(failed) });
    if (rejected > 0) counts.push({ label: l10n.t('Rejected'), value: String(rejected) });
  }

  const conditions: ConditionRow[] = (split?.status?.conditions ?? []).map((c) => {
    const since = relativeTime(c.lastTransitionTime, now);
    return {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      ...(since !== undefined ? { since } : {}),
      tone:
        c.type === 'Ready'
          ? c.status === 'True'
            ? 'ok'
            : phase === 'Pending' || phase === 'Preparing' || phase === 'Draining'
              ? 'progress'
              : phaseTone(phase)
          : 'muted',
    };
  });

  const sidecar: DetailsModel['sidecar'] =
    session === undefined
      ? undefined
      : {
          facts: [
            { label: l10n.t('Stage'), value: session.stage },
            { label: l10n.t('Delivery'), value: session.mode },
            ...(session.pid !== undefined
              ? [{ label: l10n.t('Process'), value: l10n.t('pid {0}', session.pid) }]
              : []),
            { label: l10n.t('Says'), value: session.message },
            ...(session.ready !== undefined && Object.keys(session.ready.env).length > 0
              ? [
                  {
                    label: l10n.t('Env for your process'),
                    value: Object.entries(session.ready.env)
                      .map(([k, v]) => `${k}=${v}`)
                      .join('\n'),
                    code: true,
                  },
                ]
              : []),
            ...(session.ready !== undefined && session.ready.secretEnv.length > 0
              ? [
                  {
                    label: l10n.t('Secret env (names)'),
                    value: l10n.t('{0} — values only in the env file', session.ready.secretEnv.join(', ')),
                    code: true,
                  },
                ]
              : []),
            ...(session.ready?.envFile !== undefined
              ? [{ label: l10n.t('Env file'), value: session.ready.envFile, code: true }]
              : []),
            ...(session.detached !== undefined
              ? [{ label: l10n.t('Detached'), value: session.detached.message }]
              : []),
          ],
          ...(session.error !== undefined
            ? { error: `${session.error.message} ${session.error.suggestedAction}`.trim() }
            : {}),
          warnings: [...session.warnings].reverse().map((w) => {
            // The code's words in the user's language; the sidecar's sentence is in the log.
            const words = warningWords(w);
            return {
              time: relativeTime(w.time, now) ?? w.time,
              code: w.code,
              message: `${words.message} ${words.suggestedAction}`,
            };
          }),
        };

  const status = input.workload?.splitStatus;
  const others: OtherRoute[] = (input.others ?? [])
    .filter((s) => s.metadata.name !== input.name)
    .map((s) => {
      const own = input.owner !== undefined && s.spec.owner === input.owner;
      const p = splitPhase(s);
      return {
        owner: own ? `${s.spec.owner} (you)` : s.spec.owner,
        queues: s.spec.queues.join(', '),
        phase: p,
        tone: phaseTone(p),
        filter: filterForDisplay(specFilter(s.spec), own),
      };
    });

  const who =
    split === undefined
      ? l10n.t('Split')
      : mine
        ? l10n.t('Your split')
        : l10n.t("{0}'s split", split.spec.owner);
  return {
    title: `${workloadName !== undefined ? l10n.t('Split: {0}', workloadName) : l10n.t('Split {0}', input.name)}${queues !== undefined ? ` [${queues}]` : ''}`,
    name: input.name,
    heading: workloadName !== undefined ? l10n.t('{0} of {1}', who, workloadName) : `${who} ${input.name}`,
    subheading: [
      input.name,
      l10n.t('namespace {0}', input.namespace),
      l10n.t('context {0}', input.context),
    ].join(' · '),
    phase: { text: phase, tone: (session?.blocked.length ?? 0) > 0 && mine ? 'warning' : phaseTone(phase) },
    ...(reason !== undefined ? { waitingOn: reason } : {}),
    ...(next !== undefined ? { next } : {}),
    actions,
    notes,
    facts,
    routes: routeRows(input),
    counts,
    conditions,
    ...(sidecar !== undefined ? { sidecar } : {}),
    ...(status !== undefined
      ? {
          workloadStatus: {
            phase: status.phase,
            tone: WORKLOAD_TONES[status.phase],
            message: status.message,
            ...(status.nextAction !== undefined ? { nextAction: status.nextAction } : {}),
            updated: relativeTime(status.updated, now) ?? status.updated,
          },
        }
      : {}),
    others,
    events:
      input.events.state === 'listed'
        ? {
            state: 'listed',
            events: input.events.events.map((ev) => ({
              ...ev,
              ...(ev.time !== undefined ? { time: relativeTime(ev.time, now) ?? ev.time } : {}),
            })),
          }
        : input.events,
  };
}

// ---------------------------------------------------------------------------------------------
// HTML

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const e = escapeHtml;

function factList(facts: readonly Fact[]): string {
  return `<dl class="facts">${facts
    .map((f) => `<dt>${e(f.label)}</dt><dd${f.code ? ' class="code"' : ''}>${e(f.value)}</dd>`)
    .join('')}</dl>`;
}

function badge(text: string, tone: Tone): string {
  return `<span class="badge tone-${tone}">${e(text)}</span>`;
}

function num(value: number | undefined): string {
  return value === undefined ? '<span class="dim">–</span>' : e(String(value));
}

function button(a: DetailsAction): string {
  return `<button type="button" class="${a.primary ? 'primary' : 'secondary'}" data-action="${e(a.id)}"${
    a.title !== undefined ? ` title="${e(a.title)}"` : ''
  }>${e(a.label)}</button>`;
}

function section(id: string, title: string, body: string): string {
  return `<section data-section="${e(id)}"><h2>${e(title)}</h2>${body}</section>`;
}

function routesBlock(rows: readonly RouteRow[]): string {
  if (rows.length === 0) return `<p class="dim">${e(l10n.t('No routes: the split is gone.'))}</p>`;
  return rows
    .map((r) => {
      const facts: Fact[] = [
        { label: l10n.t('Session shadow'), value: r.shadow ?? '–', code: true },
        { label: l10n.t('Delivers to'), value: r.deliversTo ?? '–', code: true },
      ];
      const stats: [string, number | undefined][] = [
        [l10n.t('Routed'), r.routed ?? 0],
        ...(r.lag !== undefined ? ([[l10n.t('Lag'), r.lag]] as [string, number][]) : []),
        ...(r.sourceBacklog !== undefined
          ? ([[l10n.t("Waiting in the source (the app's lag)"), r.sourceBacklog]] as [string, number][])
          : []),
        ...(r.handed !== undefined
          ? ([
              [l10n.t('Handed to you'), r.handed],
              [l10n.t('Failed attempts'), r.failed],
              [l10n.t('Rejected'), r.rejected],
            ] as [string, number | undefined][])
          : []),
      ];
      return `<div class="route" data-queue="${e(r.queue)}"><div class="route-head"><span class="code queue">${e(
        r.queue,
      )}</span> ${badge(r.phase, r.tone)}${r.source !== undefined ? ` <span class="dim">${e(r.source)}</span>` : ''}</div>${
        r.blocked !== undefined ? `<div class="callout tone-warning blocked">${e(r.blocked)}</div>` : ''
      }${factList(facts)}<div class="stats">${stats
        .map(
          ([label, value]) => `<span class="stat"><span class="dim">${e(label)}</span> ${num(value)}</span>`,
        )
        .join('')}</div></div>`;
    })
    .join('');
}

function eventsBlock(events: EventsView): string {
  switch (events.state) {
    case 'loading':
      return `<p class="dim" data-events="loading">${e(l10n.t('Reading events…'))}</p>`;
    case 'unavailable':
      return `<p class="dim" data-events="unavailable">${e(l10n.t('Events unavailable: {0}', events.reason))}</p>`;
    case 'listed':
      if (events.events.length === 0)
        return `<p class="dim" data-events="none">${e(
          l10n.t('No events of this split or its workload (Kubernetes keeps them for an hour).'),
        )}</p>`;
      return `<table data-events="listed"><thead><tr><th>When</th><th>Type</th><th>Reason</th><th>Object</th><th>Message</th></tr></thead><tbody>${events.events
        .map(
          (ev) =>
            `<tr><td class="nowrap">${e(ev.time ?? '–')}</td><td>${badge(ev.type, ev.type === 'Warning' ? 'warning' : 'muted')}</td><td class="code">${e(
              ev.reason,
            )}</td><td class="code">${e(ev.object)}</td><td>${e(ev.message)}${
              ev.count !== undefined && ev.count > 1
                ? ` <span class="dim">(×${e(String(ev.count))})</span>`
                : ''
            }</td></tr>`,
        )
        .join('')}</tbody></table>`;
  }
}

/** The inner HTML of the page (what a live update replaces): what is happening first, reference last. */
export function renderDetailsBody(model: DetailsModel): string {
  const parts: string[] = [];
  parts.push(
    `<header><h1>${e(model.heading)} ${badge(model.phase.text, model.phase.tone)}</h1><p class="dim code">${e(
      model.subheading,
    )}</p></header>`,
  );
  for (const note of model.notes) parts.push(`<p class="note">${e(note)}</p>`);
  const status: string[] = [];
  if (model.waitingOn !== undefined)
    status.push(
      `<div class="callout tone-${model.phase.tone}" data-field="waiting-on"><strong>${e(
        model.phase.text === 'Active' ? l10n.t('Status') : l10n.t('Waiting on'),
      )}</strong> ${e(model.waitingOn)}</div>`,
    );
  if (model.next !== undefined)
    status.push(
      `<div class="callout next" data-field="next"><strong>${e(l10n.t('Next'))}</strong> ${e(model.next.text)}</div>`,
    );
  status.push(`<div class="actions">${model.actions.map(button).join('')}</div>`);
  parts.push(section('status', l10n.t('Now'), status.join('')));
  parts.push(section('routes', l10n.t('Routes'), routesBlock(model.routes)));
  // One queue: its route already says every count.
  if (model.counts.length > 0 && model.routes.length !== 1)
    parts.push(section('counts', l10n.t('Counts'), factList(model.counts)));
  parts.push(section('events', l10n.t('Recent events'), eventsBlock(model.events)));
  if (model.conditions.length > 0)
    parts.push(
      section(
        'conditions',
        l10n.t('Conditions'),
        `<table><thead><tr>${[
          l10n.t('Type'),
          l10n.t('Status'),
          l10n.t('Reason'),
          l10n.t('Message'),
          l10n.t('Since'),
        ]
          .map((h) => `<th>${e(h)}</th>`)
          .join('')}</tr></thead><tbody>${model.conditions
          .map(
            (c) =>
              `<tr><td class="code">${e(c.type)}</td><td>${badge(c.status, c.tone)}</td><td class="code">${e(c.reason)}</td><td>${e(
                c.message,
              )}</td><td class="nowrap">${e(c.since ?? '–')}</td></tr>`,
          )
          .join('')}</tbody></table>`,
      ),
    );
  if (model.workloadStatus !== undefined) {
    const w = model.workloadStatus;
    parts.push(
      section(
        'workload',
        l10n.t('Workload'),
        `<p>${badge(w.phase, w.tone)} ${e(w.message)} <span class="dim">(${e(w.updated)})</span></p>${
          w.nextAction !== undefined ? `<p><strong>${e(l10n.t('Next'))}</strong> ${e(w.nextAction)}</p>` : ''
        }`,
      ),
    );
  }
  if (model.sidecar !== undefined) {
    const s = model.sidecar;
    parts.push(
      section(
        'sidecar',
        l10n.t('Sidecar in this window'),
        [
          factList(s.facts),
          s.error !== undefined ? `<div class="callout tone-error">${e(s.error)}</div>` : '',
          s.warnings.length > 0
            ? `<h3>${e(l10n.t('Recent warnings'))}</h3><ul class="warnings">${s.warnings
                .map(
                  (w) =>
                    `<li><span class="dim">${e(w.time)}</span> <span class="code">${e(w.code)}</span> ${e(w.message)}</li>`,
                )
                .join('')}</ul>`
            : '',
        ].join(''),
      ),
    );
  }
  if (model.others.length > 0)
    parts.push(
      section(
        'others',
        l10n.t('Other splits of this workload'),
        `<table><thead><tr>${[l10n.t('Owner'), l10n.t('Queues'), l10n.t('Phase'), l10n.t('Filter')]
          .map((h) => `<th>${e(h)}</th>`)
          .join('')}</tr></thead><tbody>${model.others
          .map(
            (o) =>
              `<tr><td>${e(o.owner)}</td><td class="code">${e(o.queues)}</td><td>${badge(o.phase, o.tone)}</td><td class="code">${e(
                o.filter,
              )}</td></tr>`,
          )
          .join('')}</tbody></table>`,
      ),
    );
  parts.push(section('split', l10n.t('Split'), factList(model.facts)));
  return parts.join('\n');
}

export interface PageOptions {
  /** webview.cspSource */
  cspSource: string;
  /** A fresh random value per page: the only script that runs carries it. */
  nonce: string;
  /** webview.asWebviewUri of media/details.css */
  styleUri: string;
}

/**
 * The whole page: strict CSP (nothing but the panel's own stylesheet and the one inline script
 * with this page's nonce; no remote content, no inline handlers), the body, and the script that
 * posts button presses (their action id only) and swaps in live updates.
 */
export function renderDetailsHtml(model: DetailsModel, options: PageOptions): string {
  const csp = [
    "default-src 'none'",
    `style-src ${options.cspSource}`,
    `script-src 'nonce-${options.nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${e(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${e(options.styleUri)}">
<title>${e(model.title)}</title>
</head>
<body>
<main id="root" data-split="${e(model.name)}">
${renderDetailsBody(model)}
</main>
<script nonce="${e(options.nonce)}">${DETAILS_SCRIPT}</script>
</body>
</html>`;
}

/** Runs in the webview: button presses go out as `{type: 'action', id}`, updates come in as HTML. */
const DETAILS_SCRIPT = `(function () {
  const vscode = acquireVsCodeApi();
  const root = document.getElementById('root');
  document.addEventListener('click', function (event) {
    const target = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
    if (target && !target.disabled) vscode.postMessage({ type: 'action', id: target.getAttribute('data-action') });
  });
  window.addEventListener('message', function (event) {
    const message = event.data;
    if (message && message.type === 'render' && typeof message.html === 'string') {
      root.innerHTML = message.html;
      if (typeof message.title === 'string') document.title = message.title;
    }
  });
  vscode.postMessage({ type: 'ready' });
})();`;
