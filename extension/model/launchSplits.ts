// Which split a launch configuration asks for, in a form every debugger accepts.
//
// VS Code validates each debugger's launch attributes with `additionalProperties: false`, and no
// other extension's schema can add to that, so a `queueSplit` property shows "Property queueSplit
// is not allowed" for node, debugpy, go, java, cppdbg... (docs/launch-configurations.md). Every
// debugger does accept an environment entry, so the launch names its split there:
//
//   "env": { "QUEUE_SPLIT": "orders" }                          (node, debugpy, go, java, ...)
//   "environment": [{ "name": "QUEUE_SPLIT", "value": "orders" }]   (cppdbg)
//
// and the split itself is defined in the folder's .vscode/queue-split.json (its own JSON schema,
// media/schemas/queue-split.schema.json), with the settings of the old block:
//
//   { "splits": { "orders": { "workload": "deployment/orders", "queues": ["orders"], "delivery": "env" } } }
//
// The old inline `queueSplit` block is still read (and offered a one-click migration).
// Pure, and small enough for the activation bundle; reading and editing the files' JSON-with-
// comments text is in model/launchEdit.ts (its own bundle, loaded when a launch names a split).
import { envTargetFor } from './debuggerEnv';
import { LAUNCH_BLOCK_KEY } from './launch';

/** The env var naming the split (its value: a key of `splits` in .vscode/queue-split.json). */
export const SPLIT_ENV_MARKER = 'QUEUE_SPLIT';
/** The splits file, relative to the workspace folder. */
export const SPLITS_FILE_SEGMENTS = ['.vscode', 'queue-split.json'] as const;
export const SPLITS_FILE = SPLITS_FILE_SEGMENTS.join('/');

/** A split name: what the schema allows, so a name written by hand and by the command agree. */
export const SPLIT_NAME = /^[A-Za-z0-9][-._A-Za-z0-9]*$/;

export type SplitReference =
  /** `env.QUEUE_SPLIT` (or cppdbg's `environment` entry) names a split of the splits file. */
  | { kind: 'named'; name: string }
  /** The old inline `queueSplit` block (still read; VS Code flags it as not allowed). */
  | { kind: 'inline'; raw: unknown }
  | { kind: 'none' };

function envValue(configuration: Record<string, unknown>): unknown {
  const type = typeof configuration.type === 'string' ? configuration.type : '';
  const target = envTargetFor(type);
  const field = configuration[target.field];
  if (target.shape === 'object') {
    if (typeof field !== 'object' || field === null || Array.isArray(field)) return undefined;
    return (field as Record<string, unknown>)[SPLIT_ENV_MARKER];
  }
  if (!Array.isArray(field)) return undefined;
  const entry = (field as unknown[]).find(
    (e) => typeof e === 'object' && e !== null && (e as { name?: unknown }).name === SPLIT_ENV_MARKER,
  );
  return (entry as { value?: unknown } | undefined)?.value;
}

/** What the configuration asks for; the env marker wins over an old block left beside it. */
export function splitReference(configuration: Record<string, unknown>): SplitReference {
  const value = envValue(configuration);
  if (typeof value === 'string' && value.trim() !== '') return { kind: 'named', name: value.trim() };
  if (configuration[LAUNCH_BLOCK_KEY] !== undefined)
    return { kind: 'inline', raw: configuration[LAUNCH_BLOCK_KEY] };
  return { kind: 'none' };
}

/** A split name for a launch configuration's name: lowercase words joined by "-". */
export function splitNameFor(configName: string, taken: readonly string[]): string {
  const base =
    configName
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || 'split';
  if (!taken.includes(base)) return base;
  for (let i = 2; ; i++) if (!taken.includes(`${base}-${i}`)) return `${base}-${i}`;
}
