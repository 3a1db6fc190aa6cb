// The settings of one split a debug launch starts (any debugger: node, python, go, java, ...),
// defined in .vscode/queue-split.json and named by the launch's env (model/launchSplits.ts), or,
// in the old form VS Code flags as "not allowed", inline as the launch's `queueSplit` block:
//
//   "queueSplit": {
//     "workload": "deployment/orders",      // optional: inferred from the workspace like Start Split
//     "queues": ["orders"],                 // optional: every declared queue
//     "headers": {"x-queue-split-user": "alice"}, // optional: x-queue-split-user=<owner>
//     "filter": "tenant^=alice- or baggage:queue-split-user=alice", // or instead of headers: any
//                                           // filter, as text, a clause map or {"anyOf": [...]}
//     "delivery": "env",                    // env (default) | http | relay
//     "target": "http://127.0.0.1:8080/",   // http: where messages are POSTed
//     "persist": false                      // true: keep the split when the debug session ends
//   }
//
// Parsing is pure and collects every problem with its path, so launch.json errors read like
// declaration errors.
import * as l10n from '@vscode/l10n';
import { parseFilter, type FilterInput, type HeaderFilter } from '../../core/filter';
import { formatFieldError } from '../../core/result';
import type { SidecarDeliveryMode } from '../../core/sidecarProtocol';
import { parseWorkloadRef, type WorkloadRefText } from './startSplit';

export const LAUNCH_BLOCK_KEY = 'queueSplit';
/** Set on a configuration once resolved: a second resolution of the same launch passes it through. */
export const RESOLVED_MARKER = '__queueSplitSession';

export interface LaunchBlock {
  workload?: WorkloadRefText;
  queues?: string[];
  filter?: HeaderFilter;
  mode: SidecarDeliveryMode;
  httpTarget?: string;
  persist: boolean;
}

export type LaunchParse = { ok: true; block: LaunchBlock } | { ok: false; errors: string[] };

const MODES: readonly string[] = ['http', 'env', 'relay'];
const KNOWN = new Set(['workload', 'queues', 'headers', 'filter', 'delivery', 'target', 'persist']);

/** `where` names the block in errors: the old inline block, or a split of .vscode/queue-split.json. */
export function parseLaunchBlock(raw: unknown, where: string = LAUNCH_BLOCK_KEY): LaunchParse {
  const at = (key: string) => `${where}.${key}`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return {
      ok: false,
      errors: [l10n.t('{0} must be an object, e.g. {"workload": "deployment/orders"}.', where)],
    };
  const value = raw as Record<string, unknown>;
  const errors: string[] = [];
  for (const key of Object.keys(value)) {
    if (!KNOWN.has(key))
      errors.push(l10n.t('{0} is not a known setting (known: {1}).', at(key), [...KNOWN].join(', ')));
  }
  const block: LaunchBlock = { mode: 'env', persist: false };

  if (value.workload !== undefined) {
    if (typeof value.workload !== 'string')
      errors.push(l10n.t('{0} must be a string like "deployment/orders".', at('workload')));
    else {
      const ref = parseWorkloadRef(value.workload);
      if ('error' in ref) errors.push(`${at('workload')}: ${ref.error}`);
      else block.workload = ref;
    }
  }
  if (value.queues !== undefined) {
    if (!Array.isArray(value.queues) || value.queues.some((q) => typeof q !== 'string'))
      errors.push(l10n.t('{0} must be a list of logical queue names, e.g. ["orders"].', at('queues')));
    else {
      // The rule of the declaration's logical names (PATTERNS.queueName in core/queueConfig/schema.ts),
      // not imported: that module builds the zod schemas, too heavy to load at activation.
      const bad = (value.queues as string[]).filter((q) => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(q));
      if (bad.length > 0)
        errors.push(
          l10n.t(
            '{0}: {1} not logical queue names (lowercase letters, digits, "-").',
            at('queues'),
            bad.map((q) => `"${q}"`).join(', '),
          ),
        );
      else if (value.queues.length === 0)
        errors.push(l10n.t('{0} is empty; omit it to split every declared queue.', at('queues')));
      else block.queues = [...new Set(value.queues as string[])];
    }
  }
  if (value.headers !== undefined) {
    if (typeof value.headers !== 'object' || value.headers === null || Array.isArray(value.headers))
      errors.push(
        l10n.t(
          '{0} must be an object of header names to values, e.g. {"x-queue-split-user": "alice"}.',
          at('headers'),
        ),
      );
    else {
      const parsed = parseFilter(value.headers as Record<string, unknown>, at('headers'));
      if (parsed.ok) block.filter = parsed.value;
      else errors.push(...parsed.errors.map(formatFieldError));
    }
  }
  if (value.filter !== undefined) {
    if (value.headers !== undefined)
      errors.push(
        l10n.t(
          '{0} and {1} are both set; give the filter once (filter takes any form).',
          at('filter'),
          at('headers'),
        ),
      );
    else if (typeof value.filter !== 'string' && (typeof value.filter !== 'object' || value.filter === null))
      errors.push(
        l10n.t(
          '{0} must be filter text such as "tenant^=alice-" or an object such as {"anyOf": [{"tenant": {"prefix": "alice-"}}]}.',
          at('filter'),
        ),
      );
    else {
      const parsed = parseFilter(value.filter as FilterInput, at('filter'));
      if (parsed.ok) block.filter = parsed.value;
      else errors.push(...parsed.errors.map(formatFieldError));
    }
  }
  if (value.delivery !== undefined) {
    if (typeof value.delivery !== 'string' || !MODES.includes(value.delivery))
      errors.push(l10n.t('{0} must be "env", "http" or "relay".', at('delivery')));
    else block.mode = value.delivery as SidecarDeliveryMode;
  }
  if (value.target !== undefined) {
    let url: URL | undefined;
    try {
      url = typeof value.target === 'string' ? new URL(value.target) : undefined;
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      errors.push(
        l10n.t('{0} must be an http:// or https:// URL, e.g. "http://127.0.0.1:8080/events".', at('target')),
      );
    else block.httpTarget = String(value.target);
  }
  if (value.persist !== undefined) {
    if (typeof value.persist !== 'boolean') errors.push(l10n.t('{0} must be true or false.', at('persist')));
    else block.persist = value.persist;
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, block };
}

/**
 * The launch env with the split's env merged over it (env mode). The split wins for the
 * variables it sets: the source must be the session shadow, or the debuggee steals the app's
 * messages. Returns a new object; the configuration's own env is not changed.
 */
export function mergeLaunchEnv(
  launchEnv: unknown,
  splitEnv: Readonly<Record<string, string>>,
): Record<string, string | null> {
  const base: Record<string, string | null> = {};
  if (typeof launchEnv === 'object' && launchEnv !== null && !Array.isArray(launchEnv)) {
    for (const [k, v] of Object.entries(launchEnv)) {
      if (typeof v === 'string' || v === null) base[k] = v;
      else if (typeof v === 'number' || typeof v === 'boolean') base[k] = String(v);
    }
  }
  return { ...base, ...splitEnv };
}

/** Names the split's env replaced in the launch's own env (told to the user: their value lost). */
export function overriddenNames(launchEnv: unknown, splitEnv: Readonly<Record<string, string>>): string[] {
  if (typeof launchEnv !== 'object' || launchEnv === null) return [];
  const own = launchEnv as Record<string, unknown>;
  return Object.keys(splitEnv).filter((k) => Object.hasOwn(own, k) && own[k] !== splitEnv[k]);
}

/** Reads a dotenv file the sidecar wrote (NAME=value lines, values possibly double-quoted JSON strings). */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([-._a-zA-Z][-._a-zA-Z0-9]*)\s*=\s*(.*)$/.exec(line);
    if (match === null || line.trimStart().startsWith('#')) continue;
    const [, name, rest] = match as unknown as [string, string, string];
    let value = rest.trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) {
      try {
        value = JSON.parse(value) as string;
      } catch {
        value = value.slice(1, -1);
      }
    } else if (value.startsWith("'") && value.endsWith("'") && value.length >= 2) value = value.slice(1, -1);
    out[name] = value;
  }
  return out;
}
