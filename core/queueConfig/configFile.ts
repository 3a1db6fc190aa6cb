// A setting inside a configuration file a container reads (docs/design.md, "Queue names in
// mounted files"): find one key's literal value in `.properties`, YAML or JSON text, and write
// the same text with only that value changed. Everything else — comments, order, quoting of the
// other values, other documents — stays byte for byte, so the copy the app reads differs from
// its file in exactly the one value the split sets.
import { isMap, isScalar, type Node, Scalar } from 'yaml';
import { fail, fieldError, ok, type Result } from '../result';
import { composeDocuments } from './safeYaml';

export const CONFIG_FILE_FORMATS = ['properties', 'yaml', 'json'] as const;
export type ConfigFileFormat = (typeof CONFIG_FILE_FORMATS)[number];

/** A ConfigMap holds at most 1 MiB; a file larger than that is not one of its keys. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

/** The format a file's name implies, or undefined when it implies none. */
export function formatOfPath(path: string): ConfigFileFormat | undefined {
  if (/\.properties$/i.test(path)) return 'properties';
  if (/\.ya?ml$/i.test(path)) return 'yaml';
  if (/\.json$/i.test(path)) return 'json';
  return undefined;
}

/** Where the key's value is in the text, and what it is. */
export interface FoundSetting {
  value: string;
  /** [start, end) of the value's text, quotes included. */
  span: [number, number];
  /** How a new value is written there. */
  render: (value: string) => string;
}

/** The parts of a key: `spring.kafka.consumer.group-id`; a JSON path's leading `$.` is dropped. */
export function keyParts(key: string): string[] {
  return key.replace(/^\$\./, '').split('.');
}

/**
 * The one literal value of `key` in `text`; errors at `path` name the file (`where`) and say
 * what to do. A `${...}` placeholder is refused: what it resolves to is the app framework's.
 */
export function findSetting(
  text: string,
  format: ConfigFileFormat,
  key: string,
  where: string,
  path: string,
): Result<FoundSetting> {
  if (Buffer.byteLength(text) > MAX_CONFIG_FILE_BYTES) {
    return fail([
      fieldError(
        path,
        `${where} is larger than a ConfigMap can hold.`,
        'Check that the path names the right file.',
      ),
    ]);
  }
  const found =
    format === 'properties'
      ? findProperty(text, key, where, path)
      : findInYaml(text, format, key, where, path);
  if (!found.ok) return found;
  const { value } = found.value;
  if (value.trim() === '') {
    return fail([
      fieldError(path, `${key} in ${where} is empty.`, `Set ${key} to the name the container consumes.`),
    ]);
  }
  if (/\$\{[^}]*\}/.test(value)) {
    return fail([
      fieldError(
        path,
        `${key} in ${where} is "${value}", a \${...} placeholder: the split cannot know what it resolves to.`,
        'Write the name out in the file, or declare the env var the placeholder reads instead (sourceEnv/groupEnv).',
      ),
    ]);
  }
  return found;
}

/** `text` with the setting found at `found` set to `value`. */
export function rewriteSetting(text: string, found: FoundSetting, value: string): string {
  return text.slice(0, found.span[0]) + found.render(value) + text.slice(found.span[1]);
}

// ---- YAML and JSON (JSON is YAML 1.2: one parser gives both their source ranges)

function findInYaml(
  text: string,
  format: 'yaml' | 'json',
  key: string,
  where: string,
  path: string,
): Result<FoundSetting> {
  const composed = composeDocuments(text, path, `Check that ${where} is the file the app reads.`);
  if (!composed.ok) {
    return fail(composed.errors.map((e) => ({ ...e, problem: `${where} ${e.problem}` })));
  }
  const parts = keyParts(key);
  const matches = composed.value.flatMap((doc) => matchesIn(doc.contents, parts));
  const notFound = (problem: string, fix: string): Result<FoundSetting> =>
    fail([fieldError(path, problem, fix)]);
  if (matches.length === 0)
    return notFound(
      `${where} has no key ${key}.`,
      `Name the key as the file writes it (dotted: ${parts.join('.')} matches nested keys and dotted keys alike).`,
    );
  if (matches.length > 1) {
    return notFound(
      `${where} sets ${key} ${matches.length} times (in several documents or as nested and dotted keys), so the split cannot tell which one the app reads.`,
      'Keep one definition of the key in the file (a profile-specific document may set it in its own file instead).',
    );
  }
  const node = matches[0]!;
  if (!isScalar(node)) {
    return notFound(
      `${key} in ${where} is not a single value.`,
      `Point key at the value itself (a key below ${key}?).`,
    );
  }
  if (node.type === Scalar.BLOCK_FOLDED || node.type === Scalar.BLOCK_LITERAL) {
    return notFound(`${key} in ${where} is a block scalar (| or >).`, "Write the name on the key's line.");
  }
  const raw = node.value;
  if (raw === null || typeof raw === 'object') {
    return notFound(`${key} in ${where} is empty.`, `Set ${key} to the name the container consumes.`);
  }
  // A plain number or boolean is read as the app's framework reads it: as written.
  const value = typeof raw === 'string' ? raw : (node.source ?? String(raw));
  const [start, end] = node.range ?? [0, 0];
  const style = node.type;
  return ok({
    value,
    span: [start, end],
    render: (next) => renderYamlScalar(next, format, style),
  });
}

/** Every node `parts` reach from `node`: each step a map key equal to one or more parts joined with ".". */
function matchesIn(node: unknown, parts: readonly string[]): Node[] {
  if (parts.length === 0) return node === null || node === undefined ? [] : [node as Node];
  if (!isMap(node)) return [];
  const out: Node[] = [];
  for (const pair of node.items) {
    if (!isScalar(pair.key)) continue;
    const name = String(pair.key.value);
    for (let i = 1; i <= parts.length; i++) {
      if (parts.slice(0, i).join('.') === name) out.push(...matchesIn(pair.value, parts.slice(i)));
    }
  }
  return out;
}

function renderYamlScalar(value: string, format: 'yaml' | 'json', style: Scalar.Type | undefined): string {
  if (format === 'json' || style === Scalar.QUOTE_DOUBLE) return JSON.stringify(value);
  if (style === Scalar.QUOTE_SINGLE) return `'${value.replace(/'/g, "''")}'`;
  // Plain only where YAML reads it back as this very string.
  return /^[A-Za-z_][A-Za-z0-9._/-]*$/.test(value) && !/^(true|false|null|yes|no|on|off|y|n|~)$/i.test(value)
    ? value
    : JSON.stringify(value);
}

// ---- .properties (java.util.Properties.load, which Spring Boot's loader follows)

interface PropertyLine {
  key: string;
  value: string;
  /** Offsets of the value's text in the file. */
  valueStart: number;
  valueEnd: number;
  /** The entry continues on the next line (a trailing backslash). */
  continued: boolean;
}

function findProperty(text: string, key: string, where: string, path: string): Result<FoundSetting> {
  const entries = propertyLines(text).filter((e) => e.key === key);
  // Properties.load keeps the last definition of a key.
  const last = entries[entries.length - 1];
  if (!last) {
    return fail([
      fieldError(
        path,
        `${where} has no key ${key}.`,
        'Name the key exactly as the file writes it, e.g. app.orders.topic.',
      ),
    ]);
  }
  if (last.continued) {
    return fail([
      fieldError(
        path,
        `${key} in ${where} continues over several lines (a trailing backslash).`,
        "Write the name on the key's line.",
      ),
    ]);
  }
  return ok({ value: last.value, span: [last.valueStart, last.valueEnd], render: escapePropertyValue });
}

function propertyLines(text: string): PropertyLine[] {
  const out: PropertyLine[] = [];
  const lines = text.split(/(?<=\n)/);
  let offset = 0;
  let continuing = false;
  for (const full of lines) {
    const start = offset;
    offset += full.length;
    const line = full.replace(/\r?\n$/, '');
    const wasContinuation = continuing;
    continuing = /(^|[^\\])(\\\\)*\\$/.test(line);
    if (wasContinuation) continue;
    const lead = line.length - line.trimStart().length;
    const body = line.slice(lead);
    if (body === '' || body.startsWith('#') || body.startsWith('!')) {
      continuing = false;
      continue;
    }
    let i = 0;
    let rawKey = '';
    for (; i < body.length; i++) {
      const c = body[i]!;
      if (c === '\\') {
        rawKey += c + (body[i + 1] ?? '');
        i++;
        continue;
      }
      if (c === '=' || c === ':' || c === ' ' || c === '\t' || c === '\f') break;
      rawKey += c;
    }
    while (i < body.length && /[ \t\f]/.test(body[i]!)) i++;
    if (body[i] === '=' || body[i] === ':') i++;
    while (i < body.length && /[ \t\f]/.test(body[i]!)) i++;
    const rawValue = body.slice(i);
    out.push({
      key: unescapeProperty(rawKey),
      value: unescapeProperty(continuing ? rawValue.slice(0, -1) : rawValue),
      valueStart: start + lead + i,
      valueEnd: start + line.length,
      continued: continuing,
    });
  }
  return out;
}

function unescapeProperty(raw: string): string {
  return raw.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, e: string) => {
    if (e.length === 5) return String.fromCharCode(parseInt(e.slice(1), 16));
    return ({ t: '\t', n: '\n', r: '\r', f: '\f' } as Record<string, string>)[e] ?? e;
  });
}

function escapePropertyValue(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r')
    .replace(/\t/g, '\\t')
    .replace(/^ /, '\\ ');
}
