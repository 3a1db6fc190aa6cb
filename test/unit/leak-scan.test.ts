// The leak scan's matching (test/support/leakScan.ts) on planted files: it finds a registered
// value however it was written, only in Queue Split's files, and reports without the value.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { keptLogsDirOf } from '../env/k8s/node/realNode';
import {
  describeHits,
  findLeaks,
  productRoots,
  readRegistered,
  scanFiles,
  type RegisteredSecret,
} from '../support/leakScan';

const secret: RegisteredSecret = {
  kind: 'credential',
  source: 'AMQP_URL (URL)',
  value: 'amqp://u:p"w/d@h:5672',
};

test('a registered value is found raw, inside a JSON string, URL-encoded and base64-encoded', () => {
  for (const text of [
    `url=${secret.value}`,
    JSON.stringify({ url: secret.value }),
    `?next=${encodeURIComponent(secret.value)}`,
    `Authorization: Basic ${Buffer.from(secret.value).toString('base64')}`,
  ]) {
    assert.deepEqual(
      findLeaks('f', text, [secret]),
      [{ where: 'f', kind: 'credential', source: 'AMQP_URL (URL)' }],
      text,
    );
  }
  assert.deepEqual(findLeaks('f', 'amqp://u:***@h:5672', [secret]), []);
});

test('the scan reads the controller and queue-agent logs, sidecar transcripts and test-results, not the fixture apps', () => {
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-scan-run-'));
  const repoRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-scan-repo-'));
  try {
    const plant = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
    };
    const logs = keptLogsDirOf(runDir);
    const agentLog = path.join(logs, 'ns_qs-agent-x-1_uid1', 'agent', '0.log');
    plant(agentLog, JSON.stringify({ error: secret.value }));
    plant(path.join(logs, 'queuesplit-system_c-1_uid2', 'controller', '0.log'), 'clean\n');
    plant(path.join(logs, 'ns_app-1_uid3', 'app', '0.log'), secret.value); // the fixture's own log: not the product's
    plant(path.join(runDir, 'leak-scan', 'sidecar', '1-2.log'), secret.value);
    plant(path.join(runDir, 'leak-scan', 'registered.jsonl'), JSON.stringify(secret)); // the record itself
    plant(path.join(repoRoot, 'test-results', 'e2e', 't', 'Queue Split.log'), secret.value);
    plant(path.join(repoRoot, 'test-results', 'e2e', 't', '01.png'), `\0PNG${secret.value}`);
    const { hits, files } = scanFiles(productRoots(runDir, repoRoot), [secret]);
    assert.equal(files, 4);
    assert.deepEqual(
      hits.map((h) => h.where).sort(),
      [
        agentLog,
        path.join(repoRoot, 'test-results', 'e2e', 't', 'Queue Split.log'),
        path.join(runDir, 'leak-scan', 'sidecar', '1-2.log'),
      ].sort(),
    );
    const report = describeHits(hits);
    assert.match(
      report,
      /ns_qs-agent-x-1_uid1\/agent\/0\.log: a credential \(registered by: AMQP_URL \(URL\)\)/,
    );
    assert.ok(
      !report.includes(secret.value) && !report.includes('p"w'),
      'the report never carries the value',
    );
  } finally {
    fs.rmSync(runDir, { recursive: true, force: true });
    fs.rmSync(repoRoot, { recursive: true, force: true });
  }
});

test('an absent or empty record of secrets fails the scan instead of passing it vacuously', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-scan-record-'));
  try {
    const file = path.join(dir, 'registered.jsonl');
    assert.throws(() => readRegistered(file), /records no secret/);
    fs.writeFileSync(file, '\n');
    assert.throws(() => readRegistered(file), /records no secret/);
    fs.writeFileSync(file, '{"kind":"nonsense","value":"x"}\n');
    assert.throws(() => readRegistered(file), /line 1: not a registered secret/);
    fs.writeFileSync(file, `${JSON.stringify(secret)}\n`);
    assert.deepEqual(readRegistered(file), [secret]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
