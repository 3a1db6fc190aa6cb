// The three kinds of filter key: a header (`x-user`), a W3C baggage member (`baggage:user`) and a
// JSON body field (`body:$.customer.id`). A header literally named `baggage:…` or `body:…` cannot
// be filtered on (docs/design.md §4 "Filters").
import { MAX_FILTER_KEY_BYTES } from './model';

export type BodySegment = { kind: 'name'; name: string } | { kind: 'index'; index: number };

export type FilterKey =
  | { kind: 'header'; name: string }
  | { kind: 'baggage'; member: string }
  | { kind: 'body'; path: readonly BodySegment[] };

export const BAGGAGE_PREFIX = 'baggage:';
export const BODY_PREFIX = 'body:';
/** The header W3C baggage travels in. */
export const BAGGAGE_HEADER = 'baggage';
/** Body paths deeper than this are refused (the body parse is depth-bounded too). */
export const MAX_BODY_PATH_DEPTH = 16;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/; // RFC 7230 token: a baggage key
const NAME = /^[A-Za-z0-9_-]+$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A key as written, or the problem with it (a sentence fragment) and the fix. */
export function parseFilterKey(text: string): { key: FilterKey } | { problem: string; fix: string } {
  const shown = JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
  if (text === '')
    return {
      problem: 'has an empty key',
      fix: 'Put a header name before the operator, e.g. x-queue-split-user=alice.',
    };
  if (/[=,]/.test(text) || text.trim() !== text)
    return {
      problem: `key ${shown} contains "=", "," or surrounding spaces`,
      fix: 'Use the header name only.',
    };
  if (text === '__proto__' || text === 'anyOf')
    return {
      problem: `uses the reserved key ${shown}`,
      fix: 'Filter on a different header ("__proto__" is dropped by JSON tools; "anyOf" names the list of alternatives).',
    };
  if (LONE_SURROGATE.test(text))
    return { problem: `key ${shown} is not valid Unicode text`, fix: 'Retype the key.' };
  if (Buffer.byteLength(text, 'utf8') > MAX_FILTER_KEY_BYTES)
    return {
      problem: `key ${shown} is longer than ${MAX_FILTER_KEY_BYTES} bytes; not every broker's headers can carry it`,
      fix: 'Use a shorter header name.',
    };
  if (text.startsWith(BAGGAGE_PREFIX)) {
    const member = text.slice(BAGGAGE_PREFIX.length);
    if (!TOKEN.test(member))
      return {
        problem: `baggage member ${JSON.stringify(member)} is not a W3C baggage key (an RFC 7230 token)`,
        fix: "Write baggage:<member>, e.g. baggage:user, with letters, digits and !#$%&'*+-.^_`|~ only.",
      };
    return { key: { kind: 'baggage', member } };
  }
  if (text.startsWith(BODY_PREFIX)) {
    const path = parseBodyPath(text.slice(BODY_PREFIX.length));
    if ('problem' in path) return path;
    return { key: { kind: 'body', path: path.segments } };
  }
  return { key: { kind: 'header', name: text } };
}

function parseBodyPath(text: string): { segments: BodySegment[] } | { problem: string; fix: string } {
  const fix = 'Write body:$.field.sub or body:$.items[0].id (names of letters, digits, "_" and "-").';
  if (!text.startsWith('$'))
    return { problem: `body path ${JSON.stringify(text)} does not start with "$"`, fix };
  const segments: BodySegment[] = [];
  let rest = text.slice(1);
  while (rest !== '') {
    const name = /^\.([^.[]*)/.exec(rest);
    const index = /^\[(0|[1-9]\d{0,3})\]/.exec(rest); // one spelling per index: no leading zeros
    if (name) {
      if (!NAME.test(name[1]!))
        return {
          problem: `body path ${JSON.stringify(text)} has the field name ${JSON.stringify(name[1])}`,
          fix,
        };
      segments.push({ kind: 'name', name: name[1]! });
      rest = rest.slice(name[0].length);
    } else if (index) {
      segments.push({ kind: 'index', index: Number(index[1]) });
      rest = rest.slice(index[0].length);
    } else {
      return { problem: `body path ${JSON.stringify(text)} cannot be read at ${JSON.stringify(rest)}`, fix };
    }
  }
  if (segments.length === 0) return { problem: 'body path "$" names the whole body, not a field', fix };
  if (segments.length > MAX_BODY_PATH_DEPTH)
    return { problem: `body path ${JSON.stringify(text)} is deeper than ${MAX_BODY_PATH_DEPTH} levels`, fix };
  return { segments };
}

/**
 * How two keys depend on each other. Keys of different kinds, members of different names and
 * sibling body fields vary independently; the raw baggage header and any member, or a body path
 * and one of its own sub-paths (or a field read as both an array and an object), do not — the
 * overlap decision cannot treat those exactly (core/filter/overlap.ts).
 */
export function keysDependent(a: FilterKey, b: FilterKey): boolean {
  const baggage = (k: FilterKey) => k.kind === 'baggage';
  const rawBaggage = (k: FilterKey) => k.kind === 'header' && k.name === BAGGAGE_HEADER;
  if ((baggage(a) && rawBaggage(b)) || (baggage(b) && rawBaggage(a))) return true;
  if (a.kind !== 'body' || b.kind !== 'body') return false;
  const n = Math.min(a.path.length, b.path.length);
  for (let i = 0; i < n; i++) {
    const x = a.path[i]!;
    const y = b.path[i]!;
    if (x.kind !== y.kind) return true; // one reads an array where the other reads an object
    if (
      x.kind === 'name' ? x.name !== (y as { name: string }).name : x.index !== (y as { index: number }).index
    )
      return false; // siblings
  }
  return a.path.length !== b.path.length; // one is a sub-path of the other
}
