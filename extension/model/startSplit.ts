// The decisions behind "Start Split…" and a launch configuration's queueSplit block, as pure
// functions: which workload the workspace is about, which filter is valid and free, and the
// defaults the pickers propose.
import * as l10n from '@vscode/l10n';
import {
  DEFAULT_BAGGAGE_MEMBER,
  DEFAULT_FILTER_KEY,
  decideOverlap,
  filterKeys,
  formatFilter,
  formatValue,
  parseFilter,
  sameFilter,
  type HeaderFilter,
  type RouteFilter,
} from '../../core/filter';
import { formatFieldError } from '../../core/result';
import { overlapExplanation } from './filterOverlap';
import { isMine } from './owner';
import { splitPhase } from './phases';
import type { QueueSplit, WorkloadInfo, WorkloadKind } from './types';
import { splittable } from './splittable';
import { specFilter } from '../../core/crd/splitFilter';

export interface WorkloadRefText {
  kind?: WorkloadKind;
  name: string;
}

const KINDS: Record<string, WorkloadKind> = {
  deployment: 'Deployment',
  deploy: 'Deployment',
  deployments: 'Deployment',
  statefulset: 'StatefulSet',
  statefulsets: 'StatefulSet',
  sts: 'StatefulSet',
};

const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** `deployment/orders`, `statefulset/orders` or `orders` (any kind); an error text otherwise. */
export function parseWorkloadRef(text: string): WorkloadRefText | { error: string } {
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  const kindText = slash < 0 ? undefined : trimmed.slice(0, slash).toLowerCase();
  const name = slash < 0 ? trimmed : trimmed.slice(slash + 1);
  const kind = kindText === undefined ? undefined : KINDS[kindText.replace(/\.apps$/, '')];
  if (kindText !== undefined && kind === undefined)
    return {
      error: l10n.t(
        '"{0}" is not a Deployment or StatefulSet; write deployment/NAME or statefulset/NAME.',
        kindText,
      ),
    };
  if (!OBJECT_NAME.test(name) || name.length > 253)
    return {
      error: l10n.t('"{0}" is not a Kubernetes object name (lowercase letters, digits, "-", ".").', name),
    };
  return kind !== undefined ? { kind, name } : { name };
}

export interface WorkloadCandidate extends WorkloadRefText {
  /** Where the guess comes from, shown to the user: "setting queueSplit.workload", "k8s/app.yaml", "folder name". */
  from: string;
  /** Lower wins: setting 0, manifest 1, folder name 2. */
  strength: number;
}

export interface RankedWorkload {
  workload: WorkloadInfo;
  /** Why it is proposed first, when a workspace candidate matches it. */
  inferredFrom?: string;
}

export interface Inference {
  /** Set when exactly one splittable workload matches the strongest workspace hint. */
  inferred?: RankedWorkload;
  /** Every annotated workload, matches first, for the quick pick. */
  ranked: RankedWorkload[];
}

function matchesCandidate(workload: WorkloadInfo, candidate: WorkloadRefText): boolean {
  return (
    workload.name === candidate.name && (candidate.kind === undefined || candidate.kind === workload.kind)
  );
}

export function inferWorkload(
  candidates: readonly WorkloadCandidate[],
  annotated: readonly WorkloadInfo[],
): Inference {
  const ordered = [...candidates].sort((a, b) => a.strength - b.strength);
  const hints = new Map<WorkloadInfo, WorkloadCandidate>();
  for (const candidate of ordered) {
    for (const workload of annotated) {
      if (!hints.has(workload) && matchesCandidate(workload, candidate)) hints.set(workload, candidate);
    }
  }
  const ranked: RankedWorkload[] = [...annotated]
    .sort((a, b) => {
      const ha = hints.get(a)?.strength ?? 99;
      const hb = hints.get(b)?.strength ?? 99;
      if (ha !== hb) return ha - hb;
      const sa = splittable(a) ? 0 : 1;
      const sb = splittable(b) ? 0 : 1;
      return sa !== sb ? sa - sb : a.name.localeCompare(b.name);
    })
    .map((workload) => {
      const hint = hints.get(workload);
      return hint !== undefined ? { workload, inferredFrom: hint.from } : { workload };
    });
  const strongest = Math.min(...[...hints.values()].map((c) => c.strength));
  const best = ranked.filter(
    (r) =>
      r.inferredFrom !== undefined && hints.get(r.workload)?.strength === strongest && splittable(r.workload),
  );
  return best.length === 1 && best[0] !== undefined ? { inferred: best[0], ranked } : { ranked };
}

/** Which key the proposed filter puts the owner's name in. */
export type DefaultFilterKind = 'header' | 'baggage';

/** The key of the proposed filter: the header, or "my OpenTelemetry routing key" (a baggage member). */
export function defaultFilterKey(kind: DefaultFilterKind = 'header'): string {
  return kind === 'baggage' ? `baggage:${DEFAULT_BAGGAGE_MEMBER}` : DEFAULT_FILTER_KEY;
}

/** `x-queue-split-user=<owner>`, or `baggage:queue-split-user=<owner>`. */
export function defaultFilterText(owner: string, kind: DefaultFilterKind = 'header'): string {
  return `${defaultFilterKey(kind)}=${formatValue(owner)}`;
}

/** The kind of proposed key an accepted filter uses (remembered for the next start), if any. */
export function defaultFilterKindOf(filter: RouteFilter): DefaultFilterKind | undefined {
  const keys = filterKeys(filter);
  if (keys.includes(defaultFilterKey('baggage'))) return 'baggage';
  if (keys.includes(defaultFilterKey('header'))) return 'header';
  return undefined;
}

export interface FilterCheck {
  filter?: HeaderFilter;
  /** Blocks the input: unparsable, or overlapping another live route. */
  error?: string;
}

export interface FilterContext {
  workload: WorkloadRefText;
  queues: readonly string[];
  splits: readonly QueueSplit[];
  owner: string;
}

/**
 * Parses what the user typed and checks it against the other routes on the same queues: the
 * controller rejects overlapping filters, so the input box says so before anything is created,
 * with a message that would match both and the change that separates them. Other owners' filter
 * values are never repeated back (they are their header values): model/filterOverlap.ts.
 */
export function checkFilter(text: string, context: FilterContext): FilterCheck {
  const parsed = parseFilter(text, 'filter');
  if (!parsed.ok) return { error: parsed.errors.map((e) => formatFieldError({ ...e, path: '' })).join(' ') };
  return checkOverlap(parsed.value, context);
}

/** The overlap half of checkFilter, for a filter already parsed (a launch configuration's). */
export function checkOverlap(filter: RouteFilter, context: FilterContext): FilterCheck {
  for (const split of context.splits) {
    if (split.spec.workload.name !== context.workload.name) continue;
    if (context.workload.kind !== undefined && split.spec.workload.kind !== context.workload.kind) continue;
    const phase = splitPhase(split);
    if (phase === 'Stopped' || phase === 'Rejected' || phase === 'Failed') continue;
    const shared = split.spec.queues.filter((q) => context.queues.includes(q));
    if (shared.length === 0) continue;
    const theirs = specFilter(split.spec);
    const decision = decideOverlap(filter, theirs);
    if (decision.kind === 'disjoint') continue;
    const mine = isMine(split, context.owner);
    const label = mine
      ? l10n.t('your split {0}', split.metadata.name)
      : l10n.t('the split of {0}', split.spec.owner);
    const who = mine ? l10n.t('{0} ({1})', label, formatFilter(theirs) || l10n.t('all messages')) : label;
    const why = overlapExplanation(filter, { filter: theirs, mine, label }, decision);
    const queues = shared.join(', ');
    return {
      error:
        decision.kind === 'undecided'
          ? l10n.t('May overlap {0} on {1}: {2}', who, queues, why)
          : l10n.t('Overlaps {0} on {1}: {2}', who, queues, why),
    };
  }
  return { filter };
}

/** A live split of mine on this workload, which a new start would clash with or can reuse. */
export function myLiveSplit(
  splits: readonly QueueSplit[],
  workload: { kind: WorkloadKind; name: string },
  owner: string,
): QueueSplit | undefined {
  return splits.find(
    (s) =>
      isMine(s, owner) &&
      s.spec.workload.kind === workload.kind &&
      s.spec.workload.name === workload.name &&
      s.metadata.deletionTimestamp === undefined &&
      !['Stopped', 'Rejected', 'Failed'].includes(splitPhase(s)),
  );
}

/** True when an existing split asks for exactly this (so it can be adopted instead of recreated). */
export function sameRequest(split: QueueSplit, queues: readonly string[], filter: HeaderFilter): boolean {
  const a = [...split.spec.queues].sort();
  const b = [...queues].sort();
  return a.length === b.length && a.every((q, i) => q === b[i]) && sameFilter(specFilter(split.spec), filter);
}
