// Route filters (docs/design.md §4): a set of header key=value pairs, AND-ed, compared as exact strings.
// This module owns the semantics — parsing what users type, the text a header value reads as,
// matching and overlap — so the extension, the controller and the queue-agent can never disagree
// about which route a message belongs to. Which of a message's headers a filter sees is its
// provider's (core/providers/<provider>/message.ts), through headerText below.
import { joinPath } from './fieldPath';
import { fail, fieldError, guarded, ok, type FieldError, type Result } from './result';

/** AND of key=value; `{}` = all messages (and therefore exclusive: it overlaps every filter). */
export type HeaderFilter = Readonly<Record<string, string>>;

/**
 * A message's headers as a filter sees them: name → text. Which values read as text, and which
 * of a repeated name's values counts, is its provider's (core/providers/<provider>/message.ts).
 */
export type MessageHeaders = ReadonlyMap<string, string>;

/** The header the extension proposes by default: `x-queue-split-user=<username>`. */
export const DEFAULT_FILTER_KEY = 'x-queue-split-user';

/** More pairs than this is a mistake, not a filter; the bound also keeps matching cheap. */
export const MAX_FILTER_PAIRS = 32;
/** Header values longer than this are payload, not routing data. */
export const MAX_FILTER_VALUE_LENGTH = 1024;
/** The longest header name every broker carries (some keep names as short strings, ≤ 255
 * bytes): a longer key could never match there. */
export const MAX_FILTER_KEY_BYTES = 255;
/**
 * The whole filter as JSON, in bytes. A filter is stored in the state and desired documents of
 * every route, which share one ConfigMap (1 MiB): this bound, with MAX_ROUTES_PER_WORKLOAD
 * (core/state/limits.ts), keeps the documents of a fully used workload inside it.
 */
export const MAX_FILTER_BYTES = 4096;

/** A pasted blob can produce thousands of errors; nobody reads past the first few. */
const MAX_REPORTED_ERRORS = 20;
const EXAMPLE = `${DEFAULT_FILTER_KEY}=alice`;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Pairs in a filter, in key order. */
export function filterEntries(filter: HeaderFilter): [string, string][] {
  return Object.entries(filter).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function isEmptyFilter(filter: HeaderFilter): boolean {
  return Object.keys(filter).length === 0;
}

/**
 * Parses what a user typed or a resource carries: `"k1=v1,k2=v2"`, `["k1=v1", "k2=v2"]` or
 * `{k1: "v1"}`. Collects every problem; never throws (the input is checked at run time too,
 * since it usually comes from JSON or YAML).
 */
export function parseFilter(
  input: string | readonly string[] | Readonly<Record<string, unknown>>,
  path = 'filter',
): Result<HeaderFilter> {
  return guarded(path, () => parseAnyFilter(input, path));
}

function parseAnyFilter(input: unknown, path: string): Result<HeaderFilter> {
  const collector = new PairCollector(path);
  if (typeof input === 'string') parseFilterText(input, path, collector);
  else if (Array.isArray(input)) parseFilterList(input, path, collector);
  else if (isPlainObject(input)) parseFilterMap(input, path, collector);
  else {
    collector.error(
      path,
      `must be "key=value,key2=value2", a list of "key=value" or a map; got ${describeType(input)}.`,
      `Write it as "${EXAMPLE}".`,
    );
  }
  return collector.result();
}

function parseFilterList(items: readonly unknown[], path: string, collector: PairCollector): void {
  items.forEach((item, index) => {
    const itemPath = joinPath(path, index);
    if (typeof item === 'string') parsePairText(item, itemPath, `"${truncate(item)}"`, collector);
    else
      collector.error(
        itemPath,
        `must be a "key=value" string, got ${describeType(item)}.`,
        `Write it as "${EXAMPLE}".`,
      );
  });
}

function parseFilterMap(
  map: Readonly<Record<string, unknown>>,
  path: string,
  collector: PairCollector,
): void {
  for (const key of Object.keys(map)) {
    const value = map[key];
    const keyPath = joinPath(path, key);
    if (typeof value === 'string') {
      collector.add(key, value, keyPath);
    } else {
      const shown = typeof value === 'object' || typeof value === 'function' ? '...' : String(value);
      collector.error(
        keyPath,
        `must be a string, got ${describeType(value)}; header values are compared as exact strings.`,
        `Quote the value, e.g. ${JSON.stringify(key)}: "${shown}".`,
      );
    }
  }
}

function parseFilterText(text: string, path: string, collector: PairCollector): void {
  if (text.trim() === '') return; // an explicitly empty filter: all messages
  text.split(',').forEach((segment, index) => {
    const label = `entry ${index + 1} ("${truncate(segment.trim())}")`;
    if (segment.trim() === '') {
      collector.error(path, `entry ${index + 1} is empty.`, 'Remove the extra comma.');
      return;
    }
    parsePairText(segment, path, label, collector);
  });
}

function parsePairText(text: string, path: string, label: string, collector: PairCollector): void {
  const eq = text.indexOf('=');
  if (eq < 0) {
    collector.error(path, `${label} has no "=".`, `Write each pair as key=value, e.g. ${EXAMPLE}.`);
    return;
  }
  collector.add(text.slice(0, eq).trim(), text.slice(eq + 1).trim(), path);
}

/** Accumulates pairs and errors with the rules shared by every input form. */
class PairCollector {
  private readonly pairs = new Map<string, string>();
  private readonly errors: FieldError[] = [];

  constructor(private readonly path: string) {}

  error(path: string, problem: string, fix: string): void {
    this.errors.push(fieldError(path, problem, fix));
  }

  add(key: string, value: string, path: string): void {
    const shown = JSON.stringify(truncate(key));
    if (key === '') {
      this.error(path, 'has an empty key.', `Put a header name before "=", e.g. ${EXAMPLE}.`);
      return;
    }
    if (/[=,]/.test(key) || key.trim() !== key) {
      this.error(path, `key ${shown} contains "=", "," or surrounding spaces.`, 'Use the header name only.');
      return;
    }
    if (key === '__proto__') {
      // JSON/zod round trips silently drop this key, which would widen the filter.
      this.error(path, 'uses the reserved key "__proto__".', 'Filter on a different header.');
      return;
    }
    if (Buffer.byteLength(key, 'utf8') > MAX_FILTER_KEY_BYTES) {
      this.error(
        path,
        `key ${shown} is longer than ${MAX_FILTER_KEY_BYTES} bytes; not every broker's headers can carry it.`,
        'Use a shorter header name.',
      );
      return;
    }
    if (value.includes(',') || value.trim() !== value) {
      this.error(
        path,
        `value of ${shown} contains "," or surrounding spaces, which the "k=v,k2=v2" form cannot carry.`,
        'Use a value without commas or leading/trailing spaces.',
      );
      return;
    }
    if (value.length > MAX_FILTER_VALUE_LENGTH) {
      this.error(
        path,
        `value of ${shown} is longer than ${MAX_FILTER_VALUE_LENGTH} characters.`,
        'Filter on a shorter value.',
      );
      return;
    }
    if (LONE_SURROGATE.test(key) || LONE_SURROGATE.test(value)) {
      this.error(path, `pair ${shown} is not valid Unicode text.`, 'Retype the header name and value.');
      return;
    }
    const previous = this.pairs.get(key);
    if (previous !== undefined && previous !== value) {
      this.error(
        path,
        `key ${shown} is given twice with different values (${JSON.stringify(previous)} and ${JSON.stringify(value)}); a message carries one value per header, so the filter could never match.`,
        'Keep only one of the two values.',
      );
      return;
    }
    this.pairs.set(key, value);
  }

  result(): Result<HeaderFilter> {
    if (this.pairs.size > MAX_FILTER_PAIRS) {
      this.error(
        this.path,
        `has ${this.pairs.size} pairs; at most ${MAX_FILTER_PAIRS} are allowed.`,
        'Filter on fewer headers.',
      );
    }
    const bytes = Buffer.byteLength(JSON.stringify(Object.fromEntries(this.pairs)), 'utf8');
    if (bytes > MAX_FILTER_BYTES) {
      this.error(
        this.path,
        `is ${bytes} bytes as JSON; at most ${MAX_FILTER_BYTES} are allowed (filters are stored with every route).`,
        'Filter on fewer or shorter headers and values.',
      );
    }
    if (this.errors.length > MAX_REPORTED_ERRORS) {
      const hidden = this.errors.length - MAX_REPORTED_ERRORS;
      return fail([
        ...this.errors.slice(0, MAX_REPORTED_ERRORS),
        fieldError(this.path, `and ${hidden} more problems like these.`, 'Fix the ones above first.'),
      ]);
    }
    if (this.errors.length > 0) return fail(this.errors);
    const sorted = [...this.pairs].sort(([a], [b]) => (a < b ? -1 : 1));
    // fromEntries defines own properties, so a header named "__proto__" stays a plain key.
    return ok(Object.freeze(Object.fromEntries(sorted)));
  }
}

/** `"k1=v1,k2=v2"` with keys sorted; `""` for the empty filter. parseFilter reads it back. */
export function formatFilter(filter: HeaderFilter): string {
  return filterEntries(filter)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

/** True when one message could match both: every key the two share has the same value. */
export function filtersOverlap(a: HeaderFilter, b: HeaderFilter): boolean {
  for (const [key, value] of Object.entries(a)) {
    if (Object.hasOwn(b, key) && b[key] !== value) return false;
  }
  return true;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A header value carried as text or bytes, as a filter reads it: text that is valid Unicode, or
 * bytes that are valid UTF-8; anything else is not text, and never matches. */
export function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? undefined : value;
  if (value instanceof Uint8Array) {
    try {
      return utf8.decode(value);
    } catch {
      return undefined; // not UTF-8: the header is treated as absent
    }
  }
  return undefined;
}

export function matches(filter: HeaderFilter, headers: MessageHeaders): boolean {
  for (const [key, value] of Object.entries(filter)) {
    if (headers.get(key) !== value) return false;
  }
  return true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  // A Map or a class instance has no own keys and would silently read as `{}`: all messages.
  return proto === Object.prototype || proto === null;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a map' : `a ${typeof value}`;
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
