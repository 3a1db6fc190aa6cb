// Node 20 runs a test file's top-level before (and after) hooks side by side, not one after
// another, so a file's own before() reads a fixture (test/support/clusterFixture.ts,
// test/sidecar/fixture.ts) before the fixture's hook has made it. The fixtures own a file's
// hooks and run its set-up and repairs inside them (`setup`, `defer`); these tests keep it so.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../env/paths';

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

test('a test file with a fixture registers no top-level before() or after() of its own', () => {
  const offenders: string[] = [];
  for (const file of testFiles(path.join(repoRoot, 'test'))) {
    const text = fs.readFileSync(file, 'utf8');
    if (!/\b(clusterFixture|sidecarFixture)\(/.test(text)) continue;
    for (const [i, line] of text.split('\n').entries())
      if (/^(before|after)\(/.test(line))
        offenders.push(`${path.relative(repoRoot, file)}:${i + 1}: ${line}`);
  }
  assert.deepEqual(offenders, [], 'use the fixture’s setup() and defer() instead');
});
