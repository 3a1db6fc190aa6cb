// Reads a filter from what a user typed or a resource carries, checks it whole (every problem at
// once, each naming the field, the problem and the fix), and returns its canonical form. Accepted
// inputs: the text form (core/filter/text.ts), a list of terms (AND), a clause map whose values
// are strings (equals) or predicate objects, `{anyOf: [clause, ...]}`, or any of those as JSON text.
import { joinPath } from '../fieldPath';
import { fail, fieldError, guarded, ok, type FieldError, type Result } from '../result';
import { compileFilter } from './compile';
import { commonWord } from './language';
import { keysDependent, parseFilterKey, type FilterKey } from './keys';
import {
  MAX_FILTER_BYTES,
  MAX_FILTER_CLAUSES,
  MAX_FILTER_PAIRS,
  MAX_FILTER_STATES,
  MAX_FILTER_VALUE_LENGTH,
  MAX_IN_VALUES,
  PREDICATE_FIELDS,
  type Clause,
  type Predicate,
  type RouteFilter,
} from './model';
import { parseFilterText, type TextTerm } from './text';

/** A pasted blob can produce thousands of errors; nobody reads past the first few. */
const MAX_REPORTED_ERRORS = 20;
const EXAMPLE = 'x-queue-split-user=alice';
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export type FilterInput = string | readonly unknown[] | Readonly<Record<string, unknown>> | RouteFilter;

export function parseFilter(input: FilterInput, path = 'filter'): Result<RouteFilter> {
  return guarded(path, () => new FilterReader(path).read(input));
}

interface Entry {
  key: string;
  predicate: unknown;
  path: string;
}

class FilterReader {
  private readonly errors: FieldError[] = [];

  constructor(private readonly path: string) {}

  private error(path: string, problem: string, fix: string): void {
    this.errors.push(fieldError(path, problem, fix));
  }

  read(input: unknown): Result<RouteFilter> {
    const clauses = this.clauses(input, this.path);
    const built: Clause[] = [];
    clauses.forEach((entries, i) => {
      const clausePath =
        clauses.length > 1 || isAnyOfInput(input) ? joinPath(joinPath(this.path, 'anyOf'), i) : this.path;
      const clause = this.clause(entries, clausePath);
      if (clause) built.push(clause);
    });
    if (this.errors.length > 0) return this.failed();
    if (built.length > MAX_FILTER_CLAUSES)
      this.error(
        this.path,
        `has ${built.length} alternatives; at most ${MAX_FILTER_CLAUSES} are allowed.`,
        'Merge alternatives with "in (a, b)" or a prefix.',
      );
    const filter = canonical(built);
    const compiled = compileFilter(filter);
    if (compiled.states > MAX_FILTER_STATES)
      this.error(
        this.path,
        `needs ${compiled.states} automaton states in all; at most ${MAX_FILTER_STATES} are allowed, so that overlap stays decidable in milliseconds.`,
        'Use fewer or simpler regexes and prefixes.',
      );
    const bytes = Buffer.byteLength(JSON.stringify(filter), 'utf8');
    if (bytes > MAX_FILTER_BYTES)
      this.error(
        this.path,
        `is ${bytes} bytes as JSON; at most ${MAX_FILTER_BYTES} are allowed (filters are stored with every route).`,
        'Filter on fewer or shorter keys and values.',
      );
    return this.errors.length > 0 ? this.failed() : ok(filter);
  }

  private failed(): Result<RouteFilter> {
    if (this.errors.length > MAX_REPORTED_ERRORS) {
      const hidden = this.errors.length - MAX_REPORTED_ERRORS;
      return fail([
        ...this.errors.slice(0, MAX_REPORTED_ERRORS),
        fieldError(this.path, `and ${hidden} more problems like these.`, 'Fix the ones above first.'),
      ]);
    }
    return fail(this.errors);
  }

  /** The input as clauses of raw entries. */
  private clauses(input: unknown, path: string): Entry[][] {
    if (typeof input === 'string') {
      const trimmed = input.trim();
      if (trimmed.startsWith('{')) {
        let json: unknown;
        try {
          json = JSON.parse(trimmed);
        } catch (error) {
          this.error(
            path,
            `starts with "{" but is not JSON: ${(error as Error).message}.`,
            `Write JSON such as {"anyOf": [{"tenant": {"prefix": "alice-"}}]}, or the text form ${EXAMPLE}.`,
          );
          return [];
        }
        return this.clauses(json, path);
      }
      return this.textClauses(input, path);
    }
    if (Array.isArray(input)) return [this.listEntries(input, path)];
    if (isPlainObject(input)) {
      if (isAnyOfInput(input)) {
        const extra = Object.keys(input).filter((k) => k !== 'anyOf');
        if (extra.length > 0)
          this.error(
            path,
            `has ${extra.map((k) => JSON.stringify(k)).join(', ')} beside "anyOf".`,
            'Put every key inside one of the anyOf clauses.',
          );
        const list = input.anyOf as unknown[];
        if (list.length === 0)
          this.error(
            joinPath(path, 'anyOf'),
            'is empty, so nothing would match.',
            'List at least one clause, or use {} for every message.',
          );
        return list.map((item, i) => this.clauseEntries(item, joinPath(joinPath(path, 'anyOf'), i)));
      }
      return [this.mapEntries(input, path)];
    }
    this.error(
      path,
      `must be "key=value,key2=value2", a list of "key=value" or a map; got ${describeType(input)}.`,
      `Write it as "${EXAMPLE}".`,
    );
    return [];
  }

  private clauseEntries(item: unknown, path: string): Entry[] {
    if (typeof item === 'string') {
      const clauses = this.textClauses(item, path);
      if (clauses.length > 1)
        this.error(path, 'holds " or " inside an anyOf clause.', 'Make each alternative its own clause.');
      return clauses[0] ?? [];
    }
    if (Array.isArray(item)) return this.listEntries(item, path);
    if (isPlainObject(item)) return this.mapEntries(item, path);
    this.error(
      path,
      `must be a map of key to value or predicate; got ${describeType(item)}.`,
      'Write a clause such as {"tenant": {"prefix": "alice-"}}.',
    );
    return [];
  }

  private textClauses(text: string, path: string): Entry[][] {
    const parsed = parseFilterText(text);
    if ('errors' in parsed) {
      for (const e of parsed.errors) this.error(path, e.problem, e.fix);
      return [];
    }
    return parsed.clauses.map((terms) =>
      terms.map((t: TextTerm) => ({ key: t.key, predicate: t.predicate, path })),
    );
  }

  private listEntries(items: readonly unknown[], path: string): Entry[] {
    const entries: Entry[] = [];
    items.forEach((item, index) => {
      const itemPath = joinPath(path, index);
      if (typeof item !== 'string') {
        this.error(
          itemPath,
          `must be a "key=value" string, got ${describeType(item)}.`,
          `Write it as "${EXAMPLE}".`,
        );
        return;
      }
      const clauses = this.textClauses(item, itemPath);
      if (clauses.length > 1)
        this.error(
          itemPath,
          'holds " or " inside a list of terms.',
          'Use the text form or anyOf for alternatives.',
        );
      else entries.push(...(clauses[0] ?? []));
    });
    return entries;
  }

  private mapEntries(map: Readonly<Record<string, unknown>>, path: string): Entry[] {
    return Object.keys(map).map((key) => {
      const value = map[key];
      return {
        key,
        predicate: typeof value === 'string' ? { equals: value } : value,
        path: joinPath(path, key),
      };
    });
  }

  /** One clause: keys checked, predicates merged per key and checked, the clause satisfiable. */
  private clause(entries: readonly Entry[], path: string): Clause | undefined {
    const merged = new Map<string, { predicate: Record<string, unknown>; path: string }>();
    const before = this.errors.length;
    for (const entry of entries) {
      const shown = JSON.stringify(entry.key.length > 60 ? `${entry.key.slice(0, 57)}...` : entry.key);
      const key = parseFilterKey(entry.key);
      if ('problem' in key) {
        this.error(entry.path, `${key.problem}.`, key.fix);
        continue;
      }
      if (!isPlainObject(entry.predicate)) {
        const value = entry.predicate;
        const quoted = typeof value === 'object' || typeof value === 'function' ? '...' : String(value);
        this.error(
          entry.path,
          `must be a string or a predicate object, got ${describeType(value)}; header values are compared as text.`,
          `Quote the value, e.g. ${JSON.stringify(entry.key)}: "${quoted}", or write {"prefix": "..."}.`,
        );
        continue;
      }
      const target = merged.get(entry.key) ?? { predicate: {}, path: entry.path };
      merged.set(entry.key, target);
      for (const [field, value] of Object.entries(entry.predicate)) {
        const previous = target.predicate[field];
        if (previous !== undefined && JSON.stringify(previous) !== JSON.stringify(value)) {
          this.error(
            entry.path,
            field === 'equals'
              ? `key ${shown} is given twice with different values (${JSON.stringify(previous)} and ${JSON.stringify(value)}); a message carries one value per header, so the filter could never match.`
              : `key ${shown} has "${field}" twice with different values.`,
            'Keep only one of the two values.',
          );
          continue;
        }
        target.predicate[field] = value;
      }
    }
    if (merged.size > MAX_FILTER_PAIRS) {
      this.error(
        path,
        `has ${merged.size} pairs; at most ${MAX_FILTER_PAIRS} are allowed.`,
        'Filter on fewer keys.',
      );
      return undefined; // the checks below are per key, and pointless past the limit
    }
    const clause: Record<string, Predicate> = {};
    const keys: { text: string; key: FilterKey }[] = [];
    for (const [keyText, { predicate, path: keyPath }] of merged) {
      const checked = this.predicate(keyText, predicate, keyPath);
      if (!checked) continue;
      clause[keyText] = checked;
      const key = parseFilterKey(keyText);
      if ('key' in key) keys.push({ text: keyText, key: key.key });
    }
    for (let i = 0; i < keys.length; i++)
      for (let j = i + 1; j < keys.length; j++)
        if (keysDependent(keys[i]!.key, keys[j]!.key))
          this.error(
            path,
            `filters on both ${JSON.stringify(keys[i]!.text)} and ${JSON.stringify(keys[j]!.text)}, which read the same part of the message (the raw baggage header and one of its members, or a body field and its own sub-field).`,
            'Filter on one of the two: the member or the deeper field.',
          );
    if (this.errors.length > before) return undefined;
    const sorted = Object.fromEntries(
      Object.entries(clause).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    const compiled = compileFilter({ anyOf: [sorted] });
    for (const condition of compiled.clauses[0]?.conditions ?? []) {
      const empty = condition.finite
        ? condition.finite.size === 0
        : commonWord(condition, undefined, 20000) === undefined;
      if (!condition.absentOk && empty)
        this.error(
          joinPath(path, condition.keyText),
          `the predicates on ${JSON.stringify(condition.keyText)} exclude every value, so the filter could never match.`,
          'Remove the contradicting predicate.',
        );
    }
    if (compiled.error)
      this.error(joinPath(path, compiled.error.keyText), `${compiled.error.problem}.`, compiled.error.fix);
    return this.errors.length > before ? undefined : sorted;
  }

  /** A predicate object's fields checked and put in canonical form. */
  private predicate(keyText: string, raw: Record<string, unknown>, path: string): Predicate | undefined {
    const out: Record<string, unknown> = {};
    const before = this.errors.length;
    const fields = Object.keys(raw);
    if (fields.length === 0)
      this.error(
        path,
        'is an empty predicate.',
        'Give at least one of equals, in, prefix, regex, exists (or their not* forms).',
      );
    for (const field of fields) {
      const value = raw[field];
      const at = joinPath(path, field);
      if (!(PREDICATE_FIELDS as readonly string[]).includes(field)) {
        this.error(
          at,
          'is not a predicate field; a value must be a string (compared as text) or an object of predicates.',
          `Write a string, or use the fields ${PREDICATE_FIELDS.join(', ')}.`,
        );
      } else if (field === 'exists') {
        if (typeof value !== 'boolean')
          this.error(
            at,
            `must be true or false, got ${describeType(value)}.`,
            'Write "exists": true (present) or false (absent).',
          );
        else out[field] = value;
      } else if (field === 'in' || field === 'notIn') {
        if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
          this.error(
            at,
            `must be a list of strings, got ${describeType(value)}.`,
            'Write e.g. "in": ["alice", "bob"].',
          );
        } else if (value.length === 0 || value.length > MAX_IN_VALUES) {
          this.error(
            at,
            `has ${value.length} values; 1 to ${MAX_IN_VALUES} are allowed.`,
            value.length === 0 ? 'List at least one value.' : 'Use a prefix or a regex for larger sets.',
          );
        } else {
          const values = [...new Set(value as string[])].sort();
          values.forEach((v) => this.checkText(v, keyText, at));
          out[field] = values;
        }
      } else if (typeof value !== 'string') {
        this.error(
          at,
          `must be a string, got ${describeType(value)}; values are compared as text.`,
          `Quote the value, e.g. "${field}": "${String(value)}".`,
        );
      } else {
        this.checkText(value, keyText, at);
        out[field] = value;
      }
    }
    if (this.errors.length > before) return undefined;
    // `exists: true` says nothing a value-pinning field does not (and the text form drops it there).
    if (out.exists === true && ['equals', 'in', 'prefix', 'regex'].some((f) => out[f] !== undefined))
      delete out.exists;
    // Canonical field order, so equal predicates are equal JSON.
    return Object.fromEntries(
      PREDICATE_FIELDS.filter((f) => out[f] !== undefined).map((f) => [f, out[f]]),
    ) as Predicate;
  }

  private checkText(value: string, keyText: string, path: string): void {
    const shown = JSON.stringify(keyText.length > 60 ? `${keyText.slice(0, 57)}...` : keyText);
    if (value.length > MAX_FILTER_VALUE_LENGTH)
      this.error(
        path,
        `value of ${shown} is longer than ${MAX_FILTER_VALUE_LENGTH} characters.`,
        'Filter on a shorter value.',
      );
    else if (LONE_SURROGATE.test(value))
      this.error(path, `value of ${shown} is not valid Unicode text.`, 'Retype the value.');
  }
}

/** The canonical form: equality-only single clauses as `{key: value}`, otherwise sorted anyOf. */
export function canonical(clauses: readonly Clause[]): RouteFilter {
  if (clauses.length === 0 || clauses.some((c) => Object.keys(c).length === 0)) return Object.freeze({});
  const unique = [...new Map(clauses.map((c) => [JSON.stringify(c), c])).entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, c]) => c);
  if (unique.length === 1) {
    const only = unique[0]!;
    const equality = Object.values(only).every((p) => Object.keys(p).length === 1 && p.equals !== undefined);
    if (equality)
      return Object.freeze(Object.fromEntries(Object.entries(only).map(([k, p]) => [k, p.equals!])));
  }
  return Object.freeze({ anyOf: unique });
}

function isAnyOfInput(input: unknown): input is { anyOf: unknown[] } {
  return isPlainObject(input) && Object.hasOwn(input, 'anyOf') && Array.isArray(input.anyOf);
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
