// The unit suite's TypeScript loader (test/suite.sh: `node --import` this file): esbuild-register
// compiles each .ts file as CommonJS when it is required, and the hook below hands every .ts file
// reached through `import` (the test runner's entry file, the other --import flags) to that
// require. Nothing else passes through a hook, so packages load as Node loads them:
// @kubernetes/client-node, an ES module of several hundred files, cost 1.4 cpu-s per test process
// through tsx's module hooks and 0.5 without them, in a suite of over a hundred processes.
import { createRequire, register } from 'node:module';

createRequire(import.meta.url)('esbuild-register/dist/node').register({
  target: `node${process.versions.node}`,
  // import() as require(): a path without its extension resolves as TypeScript resolves it, and
  // the module's exports are its own (Node would read names off the uncompiled file).
  supported: { 'dynamic-import': false },
});
register('./commonjs-hooks.mjs', import.meta.url);
