// The text of the launch files: reading .vscode/queue-split.json, and the edits of "Add Queue
// Split to Launch Configuration" and "Migrate Launch Configurations": launch.json and .vscode/queue-split.json are edited as JSON-with-comments
// text (jsonc-parser's modify), so the user's comments and formatting survive — VS Code's
// configuration API would rewrite the whole list. The launch gets the env marker every debugger
// accepts, the split goes into the splits file (model/launchSplits.ts).
// A bundle of its own (esbuild.config.mjs lazyBundles): jsonc-parser stays out of activation.
import * as l10n from '@vscode/l10n';
import {
  applyEdits,
  modify,
  parse,
  printParseErrorCode,
  type FormattingOptions,
  type ParseError,
} from 'jsonc-parser';
import { envTargetFor } from './debuggerEnv';
import { LAUNCH_BLOCK_KEY, parseLaunchBlock, type LaunchParse } from './launch';
import { SPLIT_ENV_MARKER, SPLIT_NAME, SPLITS_FILE, splitNameFor, splitReference } from './launchSplits';

export { splitNameFor };

export type SplitsFile = { ok: true; splits: Record<string, unknown> } | { ok: false; errors: string[] };

/** Parses .vscode/queue-split.json (JSON with comments, as VS Code's own .vscode files). */
export function parseSplitsFile(text: string): SplitsFile {
  const problems: ParseError[] = [];
  const value = parse(text, problems, { allowTrailingComma: true }) as unknown;
  if (problems.length > 0)
    return {
      ok: false,
      errors: problems.map((p) =>
        l10n.t(
          '{0}: {1} at offset {2}; it must be JSON.',
          SPLITS_FILE,
          printParseErrorCode(p.error),
          p.offset,
        ),
      ),
    };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return {
      ok: false,
      errors: [l10n.t('{0} must be an object like {"splits": {"orders": {...}}}.', SPLITS_FILE)],
    };
  const splits = (value as { splits?: unknown }).splits;
  if (splits === undefined) return { ok: true, splits: {} };
  if (typeof splits !== 'object' || splits === null || Array.isArray(splits))
    return {
      ok: false,
      errors: [l10n.t('{0}: "splits" must be an object of split names to settings.', SPLITS_FILE)],
    };
  const bad = Object.keys(splits).filter((k) => !SPLIT_NAME.test(k));
  if (bad.length > 0)
    return {
      ok: false,
      errors: bad.map((k) =>
        l10n.t(
          '{0}: split name "{1}" must start with a letter or digit and use only letters, digits, "-", "." or "_".',
          SPLITS_FILE,
          k,
        ),
      ),
    };
  return { ok: true, splits: splits as Record<string, unknown> };
}

/**
 * The block of a named split. `fileText` undefined: the file does not exist. Errors name the
 * file, the split and the field, and say how to fix them.
 */
export function namedSplitBlock(name: string, fileText: string | undefined): LaunchParse {
  if (fileText === undefined)
    return {
      ok: false,
      errors: [
        l10n.t(
          '{0} names a split, but {1} does not exist. Create it with {2} (or run "Queue Split: Add Queue Split to Launch Configuration").',
          `${SPLIT_ENV_MARKER}=${name}`,
          SPLITS_FILE,
          `{"splits": {"${name}": {"workload": "deployment/NAME"}}}`,
        ),
      ],
    };
  const file = parseSplitsFile(fileText);
  if (!file.ok) return file;
  if (!Object.hasOwn(file.splits, name)) {
    const known = Object.keys(file.splits);
    return {
      ok: false,
      errors: [
        known.length > 0
          ? l10n.t(
              '{0}: {1} defines no split "{2}" (it defines {3}). Add it under "splits" or fix the name.',
              `${SPLIT_ENV_MARKER}=${name}`,
              SPLITS_FILE,
              name,
              known.map((k) => `"${k}"`).join(', '),
            )
          : l10n.t(
              '{0}: {1} defines no split "{2}" (it defines none). Add it under "splits" or fix the name.',
              `${SPLIT_ENV_MARKER}=${name}`,
              SPLITS_FILE,
              name,
            ),
      ],
    };
  }
  return parseLaunchBlock(file.splits[name], `${SPLITS_FILE} splits.${name}`);
}

export interface BlockDefaults {
  workload: string;
  /** Undefined: none written, and a launch applies the default `x-queue-split-user=<owner>`. */
  headers?: Record<string, string>;
  delivery: 'env' | 'http' | 'relay';
}

export function blockValue(defaults: BlockDefaults): Record<string, unknown> {
  return {
    workload: defaults.workload,
    ...(defaults.headers !== undefined ? { headers: defaults.headers } : {}),
    delivery: defaults.delivery,
  };
}

/** Indentation of the file's first indented line (VS Code writes launch.json with tabs or 2/4 spaces). */
function formatting(text: string): FormattingOptions {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  return indent.startsWith('\t')
    ? { insertSpaces: false, tabSize: 4, eol: '\n' }
    : { insertSpaces: true, tabSize: indent.length, eol: text.includes('\r\n') ? '\r\n' : '\n' };
}

function edit(text: string, path: (string | number)[], value: unknown): string {
  return applyEdits(text, modify(text, path, value, { formattingOptions: formatting(text) }));
}

type Configurations = Record<string, unknown>[];

function configurationsOf(launchJson: string): Configurations {
  const value = parse(launchJson, [], { allowTrailingComma: true }) as
    { configurations?: unknown } | undefined;
  const list = value?.configurations;
  return Array.isArray(list)
    ? list.map((c) => (typeof c === 'object' && c !== null ? (c as Record<string, unknown>) : {}))
    : [];
}

/** The marker naming `splitName` added to configuration `index`, in the field its debugger reads. */
function withMarker(
  launchJson: string,
  index: number,
  configuration: Record<string, unknown>,
  splitName: string,
): string {
  const type = typeof configuration.type === 'string' ? configuration.type : '';
  const target = envTargetFor(type);
  if (target.shape === 'object') {
    const own = configuration[target.field];
    if (typeof own === 'object' && own !== null && !Array.isArray(own))
      return edit(launchJson, ['configurations', index, target.field, SPLIT_ENV_MARKER], splitName);
    return edit(launchJson, ['configurations', index, target.field], { [SPLIT_ENV_MARKER]: splitName });
  }
  const list = configuration[target.field];
  const entry = { name: SPLIT_ENV_MARKER, value: splitName };
  if (!Array.isArray(list)) return edit(launchJson, ['configurations', index, target.field], [entry]);
  const at = list.findIndex(
    (e) => typeof e === 'object' && e !== null && (e as { name?: unknown }).name === SPLIT_ENV_MARKER,
  );
  return edit(launchJson, ['configurations', index, target.field, at >= 0 ? at : -1], entry);
}

/** The splits file with `name` defined (a new file when `fileText` is undefined). */
export function withSplit(
  fileText: string | undefined,
  name: string,
  block: Record<string, unknown>,
): string {
  if (fileText === undefined || fileText.trim() === '')
    return `${JSON.stringify({ splits: { [name]: block } }, null, 2)}\n`;
  return edit(fileText, ['splits', name], block);
}

function takenNames(splitsText: string | undefined): string[] {
  if (splitsText === undefined) return [];
  const file = parseSplitsFile(splitsText);
  return file.ok ? Object.keys(file.splits) : [];
}

export interface MarkerEdit {
  launchJson: string;
  splitsFile: string;
  splitName: string;
}

export type MarkerEditResult = { ok: true; edit: MarkerEdit } | { ok: false; error: string; fix: string };

/**
 * Adds a split for the configuration named `configName`: the marker in its env, the block in
 * the splits file. Refused when it already names one or the name is not in the file.
 */
export function addSplitTo(
  launchJson: string,
  splitsText: string | undefined,
  configName: string,
  block: Record<string, unknown>,
): MarkerEditResult {
  const configurations = configurationsOf(launchJson);
  const index = configurations.findIndex((c) => c.name === configName);
  if (index < 0)
    return {
      ok: false,
      error: l10n.t('launch.json has no configuration named "{0}".', configName),
      fix: l10n.t('Pick one of its configurations, or add one first (Run → Add Configuration…).'),
    };
  const configuration = configurations[index]!;
  const reference = splitReference(configuration);
  if (reference.kind !== 'none')
    return {
      ok: false,
      error:
        reference.kind === 'named'
          ? l10n.t(
              'Configuration "{0}" already starts the split "{1}" ({2} in its env).',
              configName,
              reference.name,
              SPLIT_ENV_MARKER,
            )
          : l10n.t('Configuration "{0}" has an old inline queueSplit block.', configName),
      fix:
        reference.kind === 'named'
          ? l10n.t('Edit that split in .vscode/queue-split.json.')
          : l10n.t(
              'Run "Queue Split: Migrate Launch Configurations" to move it to .vscode/queue-split.json.',
            ),
    };
  const splitName = splitNameFor(configName, takenNames(splitsText));
  return {
    ok: true,
    edit: {
      launchJson: withMarker(launchJson, index, configuration, splitName),
      splitsFile: withSplit(splitsText, splitName, block),
      splitName,
    },
  };
}

export interface Migration {
  launchJson: string;
  splitsFile: string;
  /** Configuration name → the split it now names. */
  migrated: { configuration: string; split: string }[];
}

/**
 * Every old inline `queueSplit` block moved into the splits file, its configuration naming it in
 * its env. The block's settings are copied unchanged (the splits file validates them the same way).
 */
export function migrateInlineBlocks(launchJson: string, splitsText: string | undefined): Migration {
  let text = launchJson;
  let splits = splitsText;
  const migrated: Migration['migrated'] = [];
  // Indices stay valid: each edit changes properties inside one configuration, never the list.
  configurationsOf(launchJson).forEach((configuration, index) => {
    const reference = splitReference(configuration);
    const raw = configuration[LAUNCH_BLOCK_KEY];
    if (raw === undefined) return;
    const configName =
      typeof configuration.name === 'string' ? configuration.name : `configuration ${index + 1}`;
    let splitName: string;
    if (reference.kind === 'named')
      splitName = reference.name; // already migrated by hand: drop the old block
    else {
      splitName = splitNameFor(configName, takenNames(splits));
      splits = withSplit(splits, splitName, raw as Record<string, unknown>);
      text = withMarker(text, index, configuration, splitName);
    }
    text = edit(text, ['configurations', index, LAUNCH_BLOCK_KEY], undefined);
    migrated.push({ configuration: configName, split: splitName });
  });
  return { launchJson: text, splitsFile: splits ?? `${JSON.stringify({ splits: {} }, null, 2)}\n`, migrated };
}

/** A new launch.json with one Node.js configuration naming `splitName`. */
export function newLaunchJson(splitName: string): string {
  return `${JSON.stringify(
    {
      version: '0.2.0',
      configurations: [
        {
          type: 'node',
          request: 'launch',
          name: 'Debug with Queue Split',
          program: '${workspaceFolder}/index.js',
          env: { [SPLIT_ENV_MARKER]: splitName },
        },
      ],
    },
    null,
    2,
  )}\n`;
}
