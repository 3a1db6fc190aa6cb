// Route filters (docs/design.md §4): which messages a route takes. This folder owns the semantics —
// parsing what users type, the text a header value reads as, matching and the exact overlap
// decision — so the extension, the controller and the queue-agent can never disagree about which
// route a message belongs to. Which of a message's headers a filter sees is its provider's
// (core/providers/<provider>/message.ts), through headerText below.
import { filterClauses, type RouteFilter } from './model';
import { formatTerms } from './text';

export * from './model';
export { parseFilter, type FilterInput } from './parse';
export { compileFilter, matches, type CompiledFilter } from './compile';
export { MessageView, headersView } from './messageView';
export {
  decideOverlap,
  describeCause,
  describeWitness,
  filterWitness,
  filtersOverlap,
  type OverlapDecision,
  type UndecidedCause,
  type Witness,
} from './overlap';
export { parseFilterKey, BAGGAGE_HEADER, type FilterKey } from './keys';
export { formatBaggage, parseBaggage } from './baggage';
export { MAX_BODY_BYTES, MAX_BODY_DEPTH } from './body';
export { formatValue } from './text';

/** The text form (core/filter/text.ts) of a stored filter; `""` for the empty filter. */
export function formatFilter(filter: RouteFilter): string {
  return filterClauses(filter)
    .map((clause) =>
      Object.entries(clause)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .flatMap(([key, predicate]) => formatTerms(key, predicate))
        .join(','),
    )
    .join(' or ');
}

/** Pairs of an equality filter in key order (for displays that show header=value). */
export function filterEntries(filter: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(filter).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
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

/** @deprecated name kept for callers written before predicates: use RouteFilter. */
export type HeaderFilter = RouteFilter;
export { messageMatching, type MatchingMessage } from './testMessage';
