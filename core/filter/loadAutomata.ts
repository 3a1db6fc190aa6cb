// Loads core/filter/automata.ts when a filter first needs an automaton (why: see that file).
import type * as Automata from './automata';

let loaded: typeof Automata | undefined;

export function automata(): typeof Automata {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, on purpose
  loaded ??= require('./automata') as typeof Automata;
  return loaded;
}

/** A string as refa's words: its code points. */
export function codePoints(text: string): number[] {
  return Array.from(text, (c) => c.codePointAt(0)!);
}
