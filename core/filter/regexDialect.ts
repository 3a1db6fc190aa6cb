// The regex dialect of `regex`/`notRegex` (docs/design.md §4 "Filters"): JavaScript syntax with
// the `u` and `s` flags (code points; `.` matches any character), matched against the whole value,
// and only what a finite automaton can decide — no back-references, look-around or word
// boundaries. A leading `^` and a trailing `$` are accepted and mean nothing more. Every regex
// compiles to a minimal DFA at parse time; matching runs that DFA (linear in the value, never
// backtracking) and the overlap decision intersects it, so the two cannot disagree.
import type { DFA, JS } from 'refa';
import { automata } from './loadAutomata';
import { MAX_KEY_STATES, MAX_REGEX_LENGTH } from './model';

export const MAX_CHARACTER = 0x10ffff;
/** States a construction may pass through before minimization (the bound keeps parse time small). */
const CONSTRUCTION_LIMIT = 4000;

export type Compiled = { dfa: DFA } | { problem: string; fix: string };

const FIX = 'Use a regex a finite automaton can decide: literals, classes, groups, |, ?, *, + and {m,n}.';

export function compileRegex(source: string): Compiled {
  if (source.length > MAX_REGEX_LENGTH)
    return {
      problem: `regex is longer than ${MAX_REGEX_LENGTH} characters`,
      fix: 'Use a shorter regex, or a prefix or a set of values.',
    };
  const body = stripEdges(source);
  let parser: JS.Parser;
  try {
    parser = automata().JS.Parser.fromLiteral({ source: body, flags: 'su' });
  } catch (error) {
    return {
      problem: `regex ${JSON.stringify(source)} is not valid: ${(error as Error).message}`,
      fix: 'Correct the regex syntax.',
    };
  }
  const refused = refusedConstruct(parser);
  if (refused)
    return {
      problem: `regex ${JSON.stringify(source)} uses ${refused}, which is outside the filter dialect`,
      fix: FIX,
    };
  try {
    const { expression, maxCharacter } = parser.parse({ backreferences: 'throw', assertions: 'throw' });
    const { NFA, DFA } = automata();
    const nfa = NFA.fromRegex(
      expression,
      { maxCharacter },
      {},
      new NFA.LimitedNodeFactory(CONSTRUCTION_LIMIT),
    );
    const dfa = DFA.fromFA(nfa, new DFA.LimitedNodeFactory(CONSTRUCTION_LIMIT));
    dfa.minimize();
    if (dfa.countNodes() > MAX_KEY_STATES) return tooComplex(source, dfa.countNodes());
    return { dfa };
  } catch (error) {
    if (error instanceof automata().TooManyNodesError) return tooComplex(source, CONSTRUCTION_LIMIT);
    return {
      problem: `regex ${JSON.stringify(source)} cannot be compiled: ${(error as Error).message}`,
      fix: FIX,
    };
  }
}

function tooComplex(source: string, states: number): { problem: string; fix: string } {
  return {
    problem: `regex ${JSON.stringify(source)} needs ${states >= CONSTRUCTION_LIMIT ? 'thousands of' : states} automaton states; at most ${MAX_KEY_STATES} are allowed, so that overlap stays decidable in milliseconds`,
    fix: 'Simplify it: large bounded repeats of wide classes ({20} of [a-z]) and many alternatives multiply states; a prefix or a set of values often says the same.',
  };
}

/** `^` at the start and `$` at the end add nothing to a whole-value match; drop them. */
function stripEdges(source: string): string {
  let body = source.startsWith('^') ? source.slice(1) : source;
  if (body.endsWith('$') && !/(^|[^\\])(\\\\)*\\\$$/.test(body)) body = body.slice(0, -1);
  return body;
}

/** The first construct a finite automaton cannot decide, named as a user would write it. */
function refusedConstruct(parser: JS.Parser): string | undefined {
  let found: string | undefined;
  automata().visitRegExpAST(parser.ast.pattern, {
    onBackreferenceEnter(node) {
      found ??= `the back-reference ${node.raw}`;
    },
    onAssertionEnter(node) {
      if (found) return;
      if (node.kind === 'lookahead' || node.kind === 'lookbehind') found = `the look-around ${node.raw}`;
      else if (node.kind === 'word') found = `the word boundary ${node.raw}`;
      else found = `the anchor ${node.raw} inside the pattern (values are matched whole)`;
    },
  });
  return found;
}
