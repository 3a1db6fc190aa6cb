// One key's predicate as a language: the values it accepts (a finite set when it pins values, a
// minimal DFA otherwise) and whether an absent key satisfies it. The matcher tests values with
// the same parts the overlap decision intersects (docs/design.md §4 "Filters").
import type { DFA } from 'refa';
import { automata, codePoints } from './loadAutomata';
import type { FilterKey } from './keys';
import { MAX_KEY_STATES, type Predicate } from './model';
import { compileRegex, MAX_CHARACTER } from './regexDialect';

const OPTIONS = { maxCharacter: MAX_CHARACTER } as const;
const CONSTRUCTION_LIMIT = 4000;

export interface KeyCondition {
  readonly keyText: string;
  readonly key: FilterKey;
  /** An absent key (or one whose value is not text) satisfies the predicate. */
  readonly absentOk: boolean;
  /** The accepted present values, when they are finitely many (`equals`/`in` narrow them). */
  readonly finite: ReadonlySet<string> | undefined;
  /** Whether a present value satisfies the predicate. */
  test(value: string): boolean;
  /** The present values the DFA accepts, before `excluded` (a superset of the accepted values). */
  dfa(): DFA;
  /** Values taken out of the DFA's language (`notEquals`/`notIn`), kept as a set: an automaton
   * of them would cost a state per character. Empty for a finite condition (already applied). */
  readonly excluded: ReadonlySet<string>;
  /** Automaton states the decision may multiply: the DFA's, except that a chain (a prefix and its
   * negation, whose product with any DFA grows only linearly) counts as 2; 0 for a finite set. */
  readonly states: number;
}

export type ConditionResult = { condition: KeyCondition } | { problem: string; fix: string };

type Part = { test: (value: string) => boolean; dfa: () => DFA };

export function keyCondition(keyText: string, key: FilterKey, predicate: Predicate): ConditionResult {
  const positives: Part[] = [];
  const negatives: Part[] = [];
  let finite: string[] | undefined;
  const pin = (values: readonly string[]) => {
    finite = finite === undefined ? [...new Set(values)] : finite.filter((v) => values.includes(v));
  };
  if (predicate.equals !== undefined) pin([predicate.equals]);
  if (predicate.in !== undefined) pin(predicate.in);
  for (const [field, target] of [
    ['prefix', positives],
    ['notPrefix', negatives],
  ] as const) {
    const p = predicate[field];
    if (p !== undefined) target.push({ test: (v) => v.startsWith(p), dfa: () => prefixDfa(p) });
  }
  for (const [field, target] of [
    ['regex', positives],
    ['notRegex', negatives],
  ] as const) {
    const source = predicate[field];
    if (source === undefined) continue;
    const compiled = compileRegex(source);
    if ('problem' in compiled) return compiled;
    const { dfa } = compiled;
    target.push({ test: (v) => dfa.test(codePoints(v)), dfa: () => dfa });
  }
  const excluded = new Set([
    ...(predicate.notEquals !== undefined ? [predicate.notEquals] : []),
    ...(predicate.notIn ?? []),
  ]);
  const mustExist = predicate.exists === true || finite !== undefined || positives.length > 0;
  const mustBeAbsent = predicate.exists === false;
  const test = (v: string): boolean =>
    !mustBeAbsent &&
    !excluded.has(v) &&
    positives.every((p) => p.test(v)) &&
    !negatives.some((n) => n.test(v));
  const absentOk = !mustExist;

  if (finite !== undefined || mustBeAbsent) {
    const values = mustBeAbsent ? [] : finite!.filter(test);
    const set = new Set(values);
    let cached: DFA | undefined;
    return {
      condition: {
        keyText,
        key,
        absentOk,
        finite: set,
        test: (v) => set.has(v),
        dfa: () => (cached ??= wordsDfa(values)),
        excluded: new Set(),
        states: 0,
      },
    };
  }
  // An infinite language: intersect the positives with the complements of the negatives.
  try {
    let dfa = automata().DFA.all(OPTIONS);
    for (const part of positives) dfa = intersect(dfa, part.dfa());
    for (const part of negatives) {
      const complement = automata().DFA.fromFA(part.dfa());
      complement.complement();
      dfa = intersect(dfa, complement);
    }
    const chain =
      predicate.regex === undefined &&
      predicate.notRegex === undefined &&
      (predicate.prefix === undefined || predicate.notPrefix === undefined);
    const states = chain ? Math.min(2, dfa.countNodes()) : dfa.countNodes();
    if (states > MAX_KEY_STATES) return tooComplex(keyText, states);
    return {
      condition: { keyText, key, absentOk, finite: undefined, test, dfa: () => dfa, excluded, states },
    };
  } catch (error) {
    if (error instanceof automata().TooManyNodesError) return tooComplex(keyText, CONSTRUCTION_LIMIT);
    throw error;
  }
}

/** The condition of a key the clause does not mention: anything, or nothing at all. */
export function unconstrained(keyText: string, key: FilterKey): KeyCondition {
  const all = automata().DFA.all(OPTIONS);
  return {
    keyText,
    key,
    absentOk: true,
    finite: undefined,
    test: () => true,
    dfa: () => all,
    excluded: new Set(),
    states: 1,
  };
}

/**
 * A present value both conditions accept, or undefined when there is none: a breadth-first search
 * over the product of their DFAs and a trie of the excluded values, so shortest first and exact.
 * DFAs are deterministic, so the search visits at most |A|·|B| states off the trie plus one per
 * trie node; `maxNodes` only guards against a bug (the caller's witness check then refuses).
 */
export function commonWord(
  a: KeyCondition,
  b: KeyCondition | undefined,
  maxNodes: number,
): string | undefined {
  const excluded = [...a.excluded, ...(b?.excluded ?? [])];
  return searchWord(a.dfa(), b?.dfa(), trieOf(excluded), maxNodes);
}

interface TrieNode {
  readonly next: Map<number, TrieNode>;
  end: boolean;
}

function trieOf(words: readonly string[]): TrieNode {
  const root: TrieNode = { next: new Map(), end: false };
  for (const word of words) {
    let node = root;
    for (const ch of word) {
      const c = ch.codePointAt(0)!;
      let child = node.next.get(c);
      if (!child) node.next.set(c, (child = { next: new Map(), end: false }));
      node = child;
    }
    node.end = true;
  }
  return root;
}

type DfaNode = DFA['initial'];
interface Step {
  readonly a: DfaNode;
  readonly b: DfaNode | undefined;
  /** Position in the trie while the word is a prefix of an excluded value; undefined once it is not. */
  readonly trie: TrieNode | undefined;
  readonly parent: Step | undefined;
  readonly char: number;
}

const PREFERRED: readonly number[] = [
  ...'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.',
].map((c) => c.codePointAt(0)!);

/** A readable character in [min, max] that is not one of `taken`, if any. */
function pick(min: number, max: number, taken: ReadonlyMap<number, unknown> | undefined): number | undefined {
  for (const c of PREFERRED) if (c >= min && c <= max && !taken?.has(c)) return c;
  for (let c = min; c <= max && c < min + 256; c++) if (!taken?.has(c)) return c;
  return undefined;
}

function searchWord(a: DFA, b: DFA | undefined, trie: TrieNode, maxNodes: number): string | undefined {
  const seen = new Set<string>();
  const ids = new Map<unknown, number>();
  const id = (x: unknown) => {
    let n = ids.get(x);
    if (n === undefined) ids.set(x, (n = ids.size));
    return n;
  };
  const keyOf = (s: Omit<Step, 'parent' | 'char'>) =>
    `${id(s.a)},${s.b ? id(s.b) : -1},${s.trie ? id(s.trie) : -1}`;
  let queue: Step[] = [{ a: a.initial, b: b?.initial, trie, parent: undefined, char: -1 }];
  seen.add(keyOf(queue[0]!));
  while (queue.length > 0) {
    const next: Step[] = [];
    for (const step of queue) {
      if (a.finals.has(step.a) && (!b || b.finals.has(step.b!)) && !step.trie?.end) return wordOf(step);
      for (const [ra, na] of step.a.out.entries()) {
        const pairs: [number, number, DfaNode | undefined][] = [];
        if (!b) pairs.push([ra.min, ra.max, undefined]);
        else
          for (const [rb, nb] of step.b!.out.entries()) {
            const min = Math.max(ra.min, rb.min);
            const max = Math.min(ra.max, rb.max);
            if (min <= max) pairs.push([min, max, nb]);
          }
        for (const [min, max, nb] of pairs) {
          const moves: [number, TrieNode | undefined][] = [];
          if (step.trie)
            for (const [c, child] of step.trie.next) if (c >= min && c <= max) moves.push([c, child]);
          const off = pick(min, max, step.trie?.next);
          if (off !== undefined) moves.push([off, undefined]);
          for (const [char, t] of moves) {
            const candidate = { a: na, b: nb, trie: t };
            const key = keyOf(candidate);
            if (seen.has(key)) continue;
            seen.add(key);
            if (seen.size > maxNodes) return wordOf({ ...candidate, parent: step, char });
            next.push({ ...candidate, parent: step, char });
          }
        }
      }
    }
    queue = next;
  }
  return undefined;
}

function wordOf(step: Step): string {
  const chars: number[] = [];
  for (let s: Step | undefined = step; s?.parent; s = s.parent) chars.push(s.char);
  return String.fromCodePoint(...chars.reverse());
}

function intersect(a: DFA, b: DFA): DFA {
  const dfa = automata().DFA.fromIntersection(
    a,
    b,
    new (automata().DFA.LimitedNodeFactory)(CONSTRUCTION_LIMIT),
  );
  dfa.minimize();
  return dfa;
}

export function wordsDfa(values: readonly string[]): DFA {
  const dfa = automata().DFA.fromWords(
    values.map((v) => codePoints(v)),
    OPTIONS,
  );
  dfa.minimize();
  return dfa;
}

function prefixDfa(prefix: string): DFA {
  const nfa = automata().NFA.fromWords([codePoints(prefix)], OPTIONS);
  nfa.append(automata().NFA.all(OPTIONS));
  const dfa = automata().DFA.fromFA(nfa, new (automata().DFA.LimitedNodeFactory)(CONSTRUCTION_LIMIT));
  dfa.minimize();
  return dfa;
}

function tooComplex(keyText: string, states: number): { problem: string; fix: string } {
  return {
    problem: `the predicates on ${JSON.stringify(keyText)} together need ${states >= CONSTRUCTION_LIMIT ? 'thousands of' : states} automaton states; at most ${MAX_KEY_STATES} are allowed, so that overlap stays decidable in milliseconds`,
    fix: 'Simplify them: fewer alternatives, smaller bounded repeats; a set of values or a prefix often says the same.',
  };
}

/** The characters every word of the DFA starts with (the chain of single-character steps). */
export function literalPrefix(dfa: DFA): string {
  let node = dfa.initial;
  let prefix = '';
  for (let steps = 0; steps < 256 && !dfa.finals.has(node); steps++) {
    const out = [...node.out.entries()];
    const only = out[0];
    if (out.length !== 1 || !only || only[0].min !== only[0].max) break;
    prefix += String.fromCodePoint(only[0].min);
    node = only[1];
  }
  return prefix;
}
