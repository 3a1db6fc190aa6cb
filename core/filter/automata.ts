// The automata library (refa) and the regex parser it rests on, behind one module loaded on first
// use (core/filter/loadAutomata.ts): the extension's activation bundle stays small (the extension
// build maps this module to a bundle of its own, esbuild.config.mjs), and a filter of exact values
// never loads it.
export { DFA, JS, NFA, TooManyNodesError } from 'refa';
export { visitRegExpAST } from '@eslint-community/regexpp';
