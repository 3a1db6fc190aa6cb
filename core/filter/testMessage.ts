// The headers and body of a test message that matches a split's own filter (Send Test Message,
// docs/design.md §8). Routes on a queue never overlap, so a message matching your filter matches
// no one else's: it can only come back to you.
import { readBody } from './body';
import { matches } from './compile';
import { MessageView } from './messageView';
import type { RouteFilter } from './model';
import { filterWitness } from './overlap';

export interface MatchingMessage {
  readonly headers: Readonly<Record<string, string>>;
  /** The body to send: the chosen one, with the fields the filter reads set in it when it is a
   * JSON object, or a JSON object of those fields alone when it is not. */
  readonly body: string | undefined;
  /** True when the chosen body had to be replaced (the filter reads body fields it lacked). */
  readonly bodyReplaced: boolean;
}

export function messageMatching(
  filter: RouteFilter,
  chosenBody: string | undefined,
): MatchingMessage | undefined {
  const witness = filterWitness(filter);
  if (!witness) return undefined;
  const headers = Object.fromEntries(witness.headers);
  if (witness.body === undefined) return { headers, body: chosenBody, bodyReplaced: false };
  const chosen = readBody(chosenBody);
  const fields = JSON.parse(witness.body) as Record<string, unknown>;
  let body = witness.body;
  let bodyReplaced = true;
  if (typeof chosen === 'object' && chosen !== null && !Array.isArray(chosen)) {
    const merged = JSON.stringify(deepMerge(chosen as Record<string, unknown>, fields));
    if (matches(filter, new MessageView(new Map(witness.headers), merged))) {
      body = merged;
      bodyReplaced = false;
    }
  }
  return { headers, body, bodyReplaced };
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] =
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      typeof current === 'object' &&
      current !== null &&
      !Array.isArray(current)
        ? deepMerge(current as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return out;
}
