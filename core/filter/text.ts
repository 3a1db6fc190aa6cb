// The text form of a filter, as typed in the extension and given to the sidecar's --filter
// (docs/design.md §4 "Filters"):
//
//   clause { " or " clause }          any clause matches
//   clause = term { "," term }        every term matches
//   term   = key "=" v | key "!=" v | key "^=" v | key "!^=" v | key "~=" re | key "!~=" re
//          | key " in (" v {"," v} ")" | key " notin (" v {"," v} ")" | "has(" key ")" | "!has(" key ")"
//
// A value is bare text (trimmed) or a JSON string ("..."), which it must be when it holds
// `,`, `(`, `)`, `"`, `\`, " or ", or surrounding spaces. `k=v,k2=v2` reads as it always has.
import type { Predicate } from './model';

export interface TextTerm {
  readonly key: string;
  readonly predicate: Predicate;
}

export type TextProblem = { problem: string; fix: string };
export type TextClauses = { clauses: TextTerm[][] } | { errors: TextProblem[] };

const EXAMPLE = 'x-queue-split-user=alice';
const OPERATORS: readonly [string, keyof Predicate][] = [
  ['!^=', 'notPrefix'],
  ['!~=', 'notRegex'],
  ['^=', 'prefix'],
  ['~=', 'regex'],
  ['!=', 'notEquals'],
  ['=', 'equals'],
];

export function parseFilterText(text: string): TextClauses {
  const errors: TextProblem[] = [];
  const clauses: TextTerm[][] = [];
  if (text.trim() === '') return { clauses: [[]] };
  const split = splitTopLevel(text);
  if ('problem' in split) return { errors: [split] };
  split.forEach((clauseTerms, c) => {
    const terms: TextTerm[] = [];
    clauseTerms.forEach((raw, t) => {
      const label = `${split.length > 1 ? `clause ${c + 1}, ` : ''}entry ${t + 1} ("${truncate(raw.trim())}")`;
      if (raw.trim() === '') {
        errors.push({
          problem: `${label.replace(/ \(""\)$/, '')} is empty.`,
          fix: 'Remove the extra comma or "or".',
        });
        return;
      }
      const term = parseTerm(raw.trim(), label);
      if ('problem' in term) errors.push(term);
      else terms.push(term);
    });
    clauses.push(terms);
  });
  return errors.length > 0 ? { errors } : { clauses };
}

function parseTerm(raw: string, label: string): TextTerm | TextProblem {
  const has = /^(!?)has\((.*)\)$/.exec(raw);
  if (has) {
    const key = readValue(has[2]!.trim());
    if (typeof key !== 'string') return { problem: `${label}: ${key.problem}`, fix: key.fix };
    return { key, predicate: { exists: has[1] !== '!' } };
  }
  if (raw.startsWith('"')) return quotedKeyTerm(raw, label);
  const set = setTerm(raw);
  if (set) {
    const values = splitValues(set.list);
    if ('problem' in values) return { problem: `${label}: ${values.problem}`, fix: values.fix };
    return { key: set.key, predicate: set.negated ? { notIn: values } : { in: values } };
  }
  const eq = raw.indexOf('=');
  if (eq < 0)
    return {
      problem: `${label} has no "=" (nor another operator).`,
      fix: `Write key=value (or !=, ^= prefix, ~= regex, "key in (a, b)", "has(key)"), e.g. ${EXAMPLE}.`,
    };
  for (const [symbol, field] of OPERATORS) {
    const at = eq - (symbol.length - 1);
    if (at < 0 || raw.slice(at, eq + 1) !== symbol) continue;
    const value = readValue(raw.slice(eq + 1).trim());
    if (typeof value !== 'string') return { problem: `${label}: ${value.problem}`, fix: value.fix };
    return { key: raw.slice(0, at).trim(), predicate: { [field]: value } };
  }
  /* c8 ignore next: "=" always matches */
  return { problem: `${label} cannot be read.`, fix: `Write it as ${EXAMPLE}.` };
}

/** A term whose key is a JSON string (a key the bare form cannot carry): `"u!"=a`. */
function quotedKeyTerm(raw: string, label: string): TextTerm | TextProblem {
  let end = 1;
  while (end < raw.length && raw[end] !== '"') end += raw[end] === '\\' ? 2 : 1;
  const key = readValue(raw.slice(0, end + 1));
  if (typeof key !== 'string') return { problem: `${label}: ${key.problem}`, fix: key.fix };
  const rest = raw.slice(end + 1);
  const term = parseTerm(`k${rest}`, label);
  if ('problem' in term) return term;
  return { key, predicate: term.predicate };
}

/** A key as the text form writes it: bare when it reads back unchanged, JSON-quoted otherwise. */
export function formatKey(key: string): string {
  const bare =
    key !== '' &&
    !/[,()"\\=]/.test(key) &&
    !/[!^~]$/.test(key) &&
    !key.startsWith('!') &&
    !/\s(or|in|notin)(\s|$)/.test(key) &&
    key.trim() === key;
  return bare ? key : JSON.stringify(key);
}

/** `key in (a, b)` / `key notin (a, b)`, found without a backtracking regex (terms can be long). */
function setTerm(raw: string): { key: string; negated: boolean; list: string } | undefined {
  if (!raw.endsWith(')')) return undefined;
  for (const [word, negated] of [
    [' notin', true],
    [' in', false],
  ] as const) {
    const at = raw.indexOf(word);
    if (at <= 0) continue;
    const open = raw.indexOf('(', at + word.length);
    if (open < 0 || raw.slice(at + word.length, open).trim() !== '') continue;
    const key = raw.slice(0, at).trim();
    if (key.includes('=')) return undefined;
    return { key, negated, list: raw.slice(open + 1, -1) };
  }
  return undefined;
}

function readValue(text: string): string | TextProblem {
  if (!text.startsWith('"')) return text;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'string') return value;
  } catch {
    // reported below
  }
  return {
    problem: `the quoted value ${truncate(text)} is not one JSON string`,
    fix: 'Close the quotes and escape " and \\ inside with a backslash.',
  };
}

function splitValues(text: string): string[] | TextProblem {
  const parts = splitTop(text, ',');
  if ('problem' in parts) return parts;
  const values: string[] = [];
  for (const part of parts) {
    const value = readValue(part.trim());
    if (typeof value !== 'string') return value;
    values.push(value);
  }
  if (values.length === 0 || (values.length === 1 && values[0] === '' && text.trim() === ''))
    return { problem: 'the set of values is empty', fix: 'List at least one value: key in (a, b).' };
  return values;
}

/** Clauses (split at " or ") of terms (split at ","), outside quotes and parentheses. */
function splitTopLevel(text: string): string[][] | TextProblem {
  const clauses = splitTop(text, ' or ');
  if ('problem' in clauses) return clauses;
  const out: string[][] = [];
  for (const clause of clauses) {
    const terms = splitTop(clause, ',');
    if ('problem' in terms) return terms;
    out.push(terms);
  }
  return out;
}

function splitTop(text: string, separator: string): string[] | TextProblem {
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '(') depth++;
    else if (c === ')') {
      if (--depth < 0) return unbalanced();
    } else if (depth === 0 && text.startsWith(separator, i)) {
      parts.push(text.slice(start, i));
      start = i + separator.length;
      i += separator.length - 1;
    }
  }
  if (inString) return { problem: 'a quoted value is not closed', fix: 'Close it with ".' };
  if (depth !== 0) return unbalanced();
  parts.push(text.slice(start));
  return parts;
}

function unbalanced(): TextProblem {
  return {
    problem: 'the parentheses do not balance',
    fix: 'Quote a value that contains "(" or ")", e.g. key="a(b"; sets are written key in (a, b).',
  };
}

/** A value as the text form writes it: bare when it reads back unchanged, JSON-quoted otherwise. */
export function formatValue(value: string): string {
  const bare =
    value !== '' &&
    value.trim() === value &&
    !/[,()"\\]/.test(value) &&
    !value.includes(' or ') &&
    // eslint-disable-next-line no-control-regex -- control characters are exactly what must be quoted
    !/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(value);
  return bare ? value : JSON.stringify(value);
}

/** One key's predicate in the text form (one or more terms). */
export function formatTerms(rawKey: string, predicate: Predicate): string[] {
  const key = formatKey(rawKey);
  const terms: string[] = [];
  const list = (values: readonly string[]) => `(${values.map(formatValue).join(', ')})`;
  const pinned = ['equals', 'in', 'prefix', 'regex'].some(
    (f) => predicate[f as keyof Predicate] !== undefined,
  );
  if (predicate.exists === true && !pinned) terms.push(`has(${key})`);
  if (predicate.exists === false) terms.push(`!has(${key})`);
  if (predicate.equals !== undefined) terms.push(`${key}=${formatValue(predicate.equals)}`);
  if (predicate.in !== undefined) terms.push(`${key} in ${list(predicate.in)}`);
  if (predicate.prefix !== undefined) terms.push(`${key}^=${formatValue(predicate.prefix)}`);
  if (predicate.regex !== undefined) terms.push(`${key}~=${formatValue(predicate.regex)}`);
  if (predicate.notEquals !== undefined) terms.push(`${key}!=${formatValue(predicate.notEquals)}`);
  if (predicate.notIn !== undefined) terms.push(`${key} notin ${list(predicate.notIn)}`);
  if (predicate.notPrefix !== undefined) terms.push(`${key}!^=${formatValue(predicate.notPrefix)}`);
  if (predicate.notRegex !== undefined) terms.push(`${key}!~=${formatValue(predicate.notRegex)}`);
  return terms;
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
