// JSON body fields as a filter reads them (docs/design.md §4 "Filters"). The parse is bounded: a
// body larger than MAX_BODY_BYTES, nested deeper than MAX_BODY_DEPTH, not UTF-8 or not JSON is
// unreadable, and an unreadable body satisfies no body predicate, negated ones included. A field
// reads as text when it is a string (its value), a number (JSON's shortest form) or a boolean;
// null, objects, arrays and missing fields read as absent.
import type { BodySegment } from './keys';

export const MAX_BODY_BYTES = 262144;
export const MAX_BODY_DEPTH = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The parsed body, or undefined when it is unreadable. */
export function readBody(body: Uint8Array | string | undefined): unknown {
  if (body === undefined) return undefined;
  // In UTF-8 bytes for text too (text never has fewer bytes than UTF-16 code units).
  const size =
    typeof body === 'string'
      ? body.length > MAX_BODY_BYTES
        ? body.length
        : Buffer.byteLength(body, 'utf8')
      : body.byteLength;
  if (size === 0 || size > MAX_BODY_BYTES) return undefined;
  let text: string;
  try {
    // A byte-order mark is dropped either way, as the decoder drops it from bytes.
    text = typeof body === 'string' ? body.replace(/^\uFEFF/, '') : utf8.decode(body);
  } catch {
    return undefined;
  }
  if (!withinDepth(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Nesting depth checked before JSON.parse, so a hostile body cannot exhaust the stack. */
function withinDepth(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_BODY_DEPTH) return false;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return true;
}

export function bodyField(parsed: unknown, path: readonly BodySegment[]): string | undefined {
  let node: unknown = parsed;
  for (const segment of path) {
    if (segment.kind === 'name') {
      if (
        typeof node !== 'object' ||
        node === null ||
        Array.isArray(node) ||
        !Object.hasOwn(node, segment.name)
      )
        return undefined;
      node = (node as Record<string, unknown>)[segment.name];
    } else {
      if (!Array.isArray(node) || segment.index >= node.length) return undefined;
      node = node[segment.index] as unknown;
    }
  }
  if (typeof node === 'string') return node;
  if (typeof node === 'number' || typeof node === 'boolean') return String(node);
  return undefined;
}

/** A JSON body with these fields set (string values); paths must not depend on each other. */
export function buildBody(fields: Iterable<readonly [readonly BodySegment[], string]>): string {
  let root: unknown = {};
  for (const [path, value] of fields) root = setPath(root, path, value);
  return JSON.stringify(root);
}

function setPath(node: unknown, path: readonly BodySegment[], value: string): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  if (head.kind === 'name') {
    const object =
      typeof node === 'object' && node !== null && !Array.isArray(node)
        ? (node as Record<string, unknown>)
        : {};
    object[head.name] = setPath(object[head.name], rest, value);
    return object;
  }
  const array = Array.isArray(node) ? (node as unknown[]) : [];
  while (array.length <= head.index) array.push(null);
  array[head.index] = setPath(array[head.index], rest, value);
  return array;
}
