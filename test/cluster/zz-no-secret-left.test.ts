// test-group: serial (scans what every other file left behind, so it runs last)
// The last file of the cluster suite (named to sort last): greps everything the suites left behind
// — the controller and queue-agent pod logs the real node keeps, the sidecar suite's
// transcripts, test-results/, and every QueueSplit, Event, ConfigMap and workload annotation in
// the API server, still standing or kept by deleteNamespace just before it deleted a test
// namespace — for the credentials, Secret values, header values and bodies the suites registered
// through test/support/secrets.ts (README: no credentials, bodies or header values in logs,
// status or errors). First it plants a leak, to show the scan can fail.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { keptLogsDir } from '../env/k8s/node/realNode';
import { repoRoot, runDir } from '../env/paths';
import { adminConfig, createNamespace, deleteNamespace } from '../support/kube';
import {
  describeHits,
  productRoots,
  readRegistered,
  scanCluster,
  scanFiles,
  scanSnapshots,
  snapshotNamespace,
  type RegisteredSecret,
} from '../support/leakScan';
import { secretRecordFile } from '../support/secrets';
import { loadServices } from '../support/services';

const services = loadServices();
const kc = adminConfig(services.kubeconfig);

test('the leak scan finds a credential planted in a log, a ConfigMap annotation and an Event of a throwaway namespace (standing, and as kept at deletion), and names each without the value', async () => {
  // Not registered in the record: it exists only in this test, so the real scan never sees it.
  const planted: RegisteredSecret = {
    kind: 'credential',
    source: 'the planted leak',
    value: `planted-${randomBytes(8).toString('hex')}`,
  };
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-leak-'));
  const namespace = await createNamespace(kc, 'qs-leak-plant');
  try {
    fs.writeFileSync(
      path.join(logDir, 'x_y_agent.log'),
      `{"event":"oops","url":${JSON.stringify(planted.value)}}\n`,
    );
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'leaky', annotations: { note: `amqp://u:${planted.value}@h` } } },
    });
    await core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: 'leaky.1' },
        involvedObject: { kind: 'ConfigMap', name: 'leaky', namespace },
        reason: 'Leak',
        message: `base64 ${Buffer.from(planted.value).toString('base64')}`,
        type: 'Warning',
      },
    });
    const files = scanFiles([{ dir: logDir, include: (f) => f.endsWith('.log') }], [planted]);
    const cluster = await scanCluster(kc, [planted]);
    const wheres = [...files.hits, ...cluster.hits].map((h) => h.where).sort();
    assert.deepEqual(
      wheres,
      [
        `ConfigMap ${namespace}/leaky`,
        `Event ${namespace}/leaky.1`,
        path.join(logDir, 'x_y_agent.log'),
      ].sort(),
    );
    // What deleteNamespace keeps of a namespace before deleting it is scanned too.
    await snapshotNamespace(kc, namespace, logDir);
    const kept = scanSnapshots(logDir, [planted]);
    assert.deepEqual(
      kept.hits.map((h) => h.where).sort(),
      [`ConfigMap ${namespace}/leaky`, `Event ${namespace}/leaky.1`].map(
        (w) => `${w} (when its namespace was deleted)`,
      ),
    );
    const report = describeHits([...files.hits, ...cluster.hits, ...kept.hits]);
    assert.match(report, /a credential \(registered by: the planted leak\)/);
    assert.ok(!report.includes(planted.value), 'the report never carries the value');
  } finally {
    fs.rmSync(logDir, { recursive: true, force: true });
    await deleteNamespace(kc, namespace);
  }
});

test('every Secret a suite creates is registered: none is created except through test/support/secrets.ts', () => {
  const helper = path.join(repoRoot, 'test', 'support', 'secrets.ts');
  const offenders = fs
    .readdirSync(path.join(repoRoot, 'test'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .filter((file) => file !== helper && file !== __filename)
    .filter((file) => fs.readFileSync(file, 'utf8').includes('createNamespacedSecret('));
  assert.deepEqual(
    offenders.map((f) => path.relative(repoRoot, f)),
    [],
    'these files create Secrets the leak scan does not know: use createSecret from test/support/secrets.ts',
  );
});

test('nothing the suites left behind holds a registered credential, Secret value, header value or message body', async () => {
  const secrets = readRegistered(secretRecordFile);
  // Loading the services registers the broker credentials and this process's markers; a Secret
  // value is registered only when a suite created one, so its absence means nothing ran here.
  assert.ok(
    secrets.some((s) => s.kind === 'secret-value'),
    `${secretRecordFile} records no Secret value: the cluster suite did not run in this run dir (${runDir}), so there is nothing to scan`,
  );
  const files = scanFiles(productRoots(runDir, repoRoot), secrets);
  assert.ok(
    files.files > 0,
    `no controller or queue-agent log kept by the real node (${keptLogsDir}) to scan`,
  );
  const cluster = await scanCluster(kc, secrets);
  const kept = scanSnapshots(runDir, secrets);
  assert.deepEqual(kept.failed, [], 'namespaces whose objects could not be kept before deletion');
  const hits = [...files.hits, ...cluster.hits, ...kept.hits];
  console.log(
    `leak scan: ${secrets.length} registered values; ${files.files} files, ${cluster.objects} API objects standing, ${kept.objects} kept from ${kept.namespaces} deleted namespaces; ${hits.length} hits`,
  );
  assert.equal(hits.length, 0, `registered secrets found:\n${describeHits(hits)}`);
});
