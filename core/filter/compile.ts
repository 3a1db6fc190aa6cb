// A filter compiled once (per route generation, per overlap check): each clause's keys as
// conditions (core/filter/language.ts). Matching and the overlap decision use the same
// conditions, so they cannot disagree about a message.
import { parseFilterKey } from './keys';
import { keyCondition, type KeyCondition } from './language';
import { MessageView } from './messageView';
import { filterClauses, type MessageHeaders, type RouteFilter } from './model';

export interface CompiledClause {
  readonly conditions: readonly KeyCondition[];
  readonly byKey: ReadonlyMap<string, KeyCondition>;
  readonly readsBody: boolean;
}

export interface CompiledFilter {
  readonly filter: RouteFilter;
  readonly clauses: readonly CompiledClause[];
  /** Automaton states of all clauses (the decision multiplies two filters' states). */
  readonly states: number;
  /** The first key that could not be compiled (parseFilter reports it; stored filters have none). */
  readonly error: { keyText: string; problem: string; fix: string } | undefined;
  matches(message: MessageView): boolean;
}

/** Compiled filters by canonical JSON: routes and checks share the automata. */
const cache = new Map<string, CompiledFilter>();
const CACHE_LIMIT = 4096;

export function compileFilter(filter: RouteFilter): CompiledFilter {
  const id = JSON.stringify(filter);
  const hit = cache.get(id);
  if (hit) return hit;
  const compiled = build(filter);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(id, compiled);
  return compiled;
}

function build(filter: RouteFilter): CompiledFilter {
  let error: CompiledFilter['error'];
  let states = 0;
  const clauses = filterClauses(filter).map((clause): CompiledClause => {
    const conditions: KeyCondition[] = [];
    for (const [keyText, predicate] of Object.entries(clause)) {
      const key = parseFilterKey(keyText);
      if ('problem' in key) {
        error ??= { keyText, ...key };
        continue;
      }
      const condition = keyCondition(keyText, key.key, predicate);
      if ('problem' in condition) {
        error ??= { keyText, ...condition };
        continue;
      }
      states += condition.condition.states;
      conditions.push(condition.condition);
    }
    // Cheap, selective conditions first: a finite set rejects most messages with one lookup.
    conditions.sort((a, b) => Number(a.finite === undefined) - Number(b.finite === undefined));
    return {
      conditions,
      byKey: new Map(conditions.map((c) => [c.keyText, c])),
      readsBody: conditions.some((c) => c.key.kind === 'body'),
    };
  });
  return {
    filter,
    clauses,
    states,
    error,
    matches: (message) => clauses.some((clause) => clauseMatches(clause, message)),
  };
}

export function clauseMatches(clause: CompiledClause, message: MessageView): boolean {
  if (clause.readsBody && !message.bodyReadable()) return false;
  for (const condition of clause.conditions) {
    const value = message.value(condition.key);
    if (value === undefined ? !condition.absentOk : !condition.test(value)) return false;
  }
  return true;
}

/** Whether a message (headers, and the body when a filter reads it) matches the filter. */
export function matches(filter: RouteFilter, message: MessageView | MessageHeaders): boolean {
  return compileFilter(filter).matches(message instanceof MessageView ? message : new MessageView(message));
}
