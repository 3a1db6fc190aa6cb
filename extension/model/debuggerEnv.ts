// Where each debugger takes the debuggee's environment, and how the split's env (env delivery)
// goes there. Most debuggers read an `env` object: node/pwa-node (js-debug), python and debugpy,
// go (Delve), java (vscode-java-debug), coreclr, lldb (CodeLLDB), php. The C/C++ extension's
// `cppdbg` reads an `environment` list of {name, value}. Each of these lets `env`/`environment`
// win over an `envFile`, so merging there is enough for the split's values to take effect.
// An `attach` configuration joins a process that already runs with its own env: env delivery
// cannot reach it, so that is refused with the fix instead of silently consuming the real source.
import * as l10n from '@vscode/l10n';
import { mergeLaunchEnv, overriddenNames } from './launch';

export type EnvShape = 'object' | 'nameValueList';

interface EnvTarget {
  field: 'env' | 'environment';
  shape: EnvShape;
}

const LIST_DEBUGGERS: ReadonlySet<string> = new Set(['cppdbg']);

/** The launch field (and its shape) the debugger of `type` reads the debuggee's env from. */
export function envTargetFor(type: string): EnvTarget {
  return LIST_DEBUGGERS.has(type)
    ? { field: 'environment', shape: 'nameValueList' }
    : { field: 'env', shape: 'object' };
}

export interface EnvMerge {
  /** The fields to set on the configuration (a new value; the original is not changed). */
  fields: Record<string, unknown>;
  /** Names whose launch value the split replaced (told to the user). */
  replaced: string[];
}

export type EnvMergeResult = { ok: true; merge: EnvMerge } | { ok: false; error: string; fix: string };

interface NameValue {
  name: string;
  value: string;
}

function listToObject(list: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(list)) return out;
  for (const entry of list as unknown[]) {
    const { name, value } = (entry ?? {}) as { name?: unknown; value?: unknown };
    if (typeof name === 'string' && (typeof value === 'string' || typeof value === 'number'))
      out[name] = String(value);
  }
  return out;
}

/**
 * The split's env merged into a launch configuration of any debugger type. The split wins for
 * the names it sets (the source must be the session shadow); the launch keeps the rest.
 */
export function mergeSplitEnv(
  configuration: { type?: unknown; request?: unknown; env?: unknown; environment?: unknown },
  splitEnv: Readonly<Record<string, string>>,
): EnvMergeResult {
  const type = typeof configuration.type === 'string' ? configuration.type : '';
  if (configuration.request === 'attach')
    return {
      ok: false,
      error: l10n.t(
        'env delivery cannot reach an attach configuration: the {0} process already runs with its own environment.',
        type || 'debugged',
      ),
      fix: l10n.t(
        'Use "request": "launch", or set "delivery": "http" or "relay" for this split in .vscode/queue-split.json.',
      ),
    };
  const target = envTargetFor(type);
  if (target.shape === 'object') {
    return {
      ok: true,
      merge: {
        fields: { env: mergeLaunchEnv(configuration.env, splitEnv) },
        replaced: overriddenNames(configuration.env, splitEnv),
      },
    };
  }
  const own = listToObject(configuration.environment);
  const merged = { ...own, ...splitEnv };
  const list: NameValue[] = Object.entries(merged).map(([name, value]) => ({ name, value }));
  return {
    ok: true,
    merge: { fields: { environment: list }, replaced: overriddenNames(own, splitEnv) },
  };
}
