// deploy/mapStack.ts: a trace from the minified agent bundle (run without --enable-source-maps,
// deploy/Dockerfile) mapped back to the TypeScript lines through the bundle's source map.
import assert from 'node:assert/strict';
import type { SourceMapPayload } from 'node:module';
import { test } from 'node:test';
import { transformSync } from 'esbuild';
import { mapStack } from '../../../deploy/mapStack';

test("a minified bundle's frame is mapped to its source line; other frames stay as they are", () => {
  const source = [
    'export class Engine {',
    '  start(): void {',
    "    throw new Error('broker gone');",
    '  }',
    '}',
  ].join('\n');
  const out = transformSync(source, {
    loader: 'ts',
    sourcefile: '../agent/engine.ts',
    sourcemap: 'external',
    minifyWhitespace: true,
    minifySyntax: true,
  });
  const column = out.code.indexOf('throw') + 1;
  const trace = [
    'Error: broker gone',
    `    at Engine.start (/app/agent.js:1:${column})`,
    '    at node:internal/main:1:1',
  ].join('\n');
  const mapped = mapStack(trace, JSON.parse(out.map) as SourceMapPayload);
  assert.equal(
    mapped,
    ['Error: broker gone', '    at Engine.start (agent/engine.ts:3:5)', '    at node:internal/main:1:1'].join(
      '\n',
    ),
  );
});
