// A workload that reads its queue name from a mounted Spring-style application.properties (a
// ConfigMap volume), not from env (docs/design.md, "Queue names in mounted files"): the split
// serves the app a copy of the ConfigMap with only that value changed, the status tells a local
// consumer which key to set, a change to the original while split is drift (Degraded, naming
// the ConfigMap), and the handback gives the volume its ConfigMap back, deletes the copy and
// loses no message.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppsV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import { clusterFixture } from '../support/clusterFixture';
import { records, waitForReadyPods } from '../support/kube';
import { pollUntil } from '../support/poll';
import { consumeQueueIds, ids, publishTo, rabbitApp, waitForAppReceived } from '../support/rabbitSplit';
import { operatorRetry, removeSplit, splitFor, waitForSplitPhase } from '../support/splits';

const fx = clusterFixture('qs-config-file', { rabbitmq: true });
const FILE = '/config/application.properties';
const KEY = 'app.orders.queue';

const declaration = [
  'queues:',
  '  - name: orders',
  '    rabbitmq:',
  '      urlEnv: AMQP_URL',
  '      managementUrlEnv: RABBITMQ_MANAGEMENT_URL',
  `      sourceFile: {path: ${FILE}, key: ${KEY}}`,
].join('\n');

const properties = (queue: string) =>
  [
    '# orders service (Spring Boot)',
    'spring.application.name=orders',
    `${KEY} = ${queue}`,
    'app.retries=3',
    '',
  ].join('\n');

test('a queue named in a mounted application.properties: split through a ConfigMap copy with only that value changed, drift on the original reported, handed back with the volume, ConfigMaps and every message as before', async () => {
  const { kc, namespace, conn, ch } = fx;
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  let source = '';
  // The source queue's name is the fixture's unique one; the ConfigMap is made before the app.
  const shape = (d: V1Deployment) => {
    d.metadata!.annotations = { ...d.metadata!.annotations, [QUEUE_CONFIG_ANNOTATION]: declaration };
    const spec = d.spec!.template.spec!;
    const app = spec.containers[0]!;
    app.env = [
      ...(app.env ?? []).filter((e) => e.name !== 'SOURCE_QUEUE'),
      { name: 'SOURCE_FROM_FILE', value: `${FILE}#${KEY}` },
    ];
    app.volumeMounts = [{ name: 'config', mountPath: '/config', readOnly: true }];
    spec.volumes = [{ name: 'config', configMap: { name: 'orders-config' } }];
  };
  const originalData = () => ({ 'application.properties': properties(source) });
  // rabbitApp names the queue after the workload; the ConfigMap must exist before its pods start.
  const made = rabbitApp(fx, 'orders-file', {
    shape: (d) => {
      source = d.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'SOURCE_QUEUE')!.value!;
      shape(d);
    },
  });
  await pollUntil(
    'the source queue is named',
    async () => source,
    (s) => s !== '',
    30_000,
  );
  await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: 'orders-config' }, data: originalData() },
  });
  await made;
  const before = await apps.readNamespacedDeployment({ name: 'orders-file', namespace });
  const revision = (d: V1Deployment) =>
    Number(d.metadata?.annotations?.['deployment.kubernetes.io/revision']);

  const split = await splitFor(kc, namespace, { workload: 'orders-file', user: 'alice' });
  const active = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', 180_000);
  const status = active.status?.queues?.[0];
  const session = status?.shadow?.source;
  assert.ok(session, 'the status names the session shadow');
  assert.deepEqual(
    status?.fileOverrides,
    [{ path: FILE, key: KEY, value: session }],
    'the key a local consumer sets',
  );
  assert.equal(status?.envOverrides, undefined, 'no env var names the source');

  // The app reads a copy: one value differs, every other byte is the original's.
  const split1 = await apps.readNamespacedDeployment({ name: 'orders-file', namespace });
  const copyName = split1.spec!.template.spec!.volumes![0]!.configMap!.name!;
  assert.match(copyName, /^qs-cfg-/);
  const copy = await core.readNamespacedConfigMap({ name: copyName, namespace });
  const appShadow = /app\.orders\.queue = (\S+)/.exec(copy.data!['application.properties']!)![1]!;
  assert.notEqual(appShadow, source);
  assert.equal(
    copy.data!['application.properties'],
    properties(source).replace(`= ${source}`, `= ${appShadow}`),
  );
  assert.deepEqual(
    copy.metadata?.ownerReferences?.map((o) => o.uid),
    [before.metadata?.uid],
    'the workload owns the copy',
  );
  assert.deepEqual(
    split1.spec!.template.spec!.containers[0]!.env,
    before.spec!.template.spec!.containers[0]!.env,
    'env untouched',
  );
  await pollUntil(
    'the app reads its application shadow (from the file)',
    async () => records((r) => r.event === 'started' && r.source === appShadow).length,
    (n) => n >= 1,
    60_000,
  );

  const alice = ids(source, 'alice', 5);
  const plain = ids(source, 'plain', 5);
  await publishTo(ch, source, alice, 'alice');
  await publishTo(ch, source, plain);
  const mine: string[] = [];
  const local = await consumeQueueIds(conn, session, mine);
  await pollUntil(
    'alice received her 5 messages',
    async () => mine.length,
    (n) => n >= 5,
    60_000,
  );
  await waitForAppReceived('the app got the others', plain, 60_000, source, appShadow);
  await local.close();
  assert.deepEqual([...mine].sort(), [...alice].sort(), 'alice got exactly her messages');
  const appIds = records((r) => r.event === 'message' && r.id.startsWith(`${source}-`)).map((r) =>
    r.event === 'message' ? r.id : '',
  );
  assert.ok(
    !appIds.some((id) => id.includes('-alice-')),
    'the app never saw an alice message: one live destination each',
  );

  // Someone edits the original while split: the app's copy is stale, so the split says so.
  await core.replaceNamespacedConfigMap({
    name: 'orders-config',
    namespace,
    body: {
      metadata: { name: 'orders-config' },
      data: { 'application.properties': `${properties(source)}app.new=1\n` },
    },
  });
  const degraded = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Degraded', 120_000);
  const message = degraded.status?.conditions?.map((c) => c.message).join(' ') ?? '';
  assert.match(message, /ConfigMap orders-config was changed/);
  assert.match(message, /annotate deployment\/orders-file queuesplit.dev\/retry=now/, 'the retry command');
  // Put back: the operator's own change undone before the handback.
  await core.replaceNamespacedConfigMap({
    name: 'orders-config',
    namespace,
    body: { metadata: { name: 'orders-config' }, data: originalData() },
  });

  const late = ids(source, 'late', 5);
  await publishTo(ch, source, late);
  // As for env drift: the route drains and the split goes; the operator's retry (the original
  // put back) copies it again and lets the handback go on.
  await removeSplit(kc, namespace, split.metadata.name, 180_000);
  await operatorRetry(kc, namespace, 'orders-file');
  const after = await pollUntil(
    'handed back: the volume names its ConfigMap again, no finalizer',
    () => apps.readNamespacedDeployment({ name: 'orders-file', namespace }),
    (d) =>
      d.spec?.template.spec?.volumes?.[0]?.configMap?.name === 'orders-config' &&
      !(d.metadata?.finalizers ?? []).includes('queuesplit.dev/handback'),
    180_000,
  );
  await waitForReadyPods(kc, namespace, 'orders-file', 1);
  assert.deepEqual(after.spec?.template.spec, before.spec?.template.spec, 'the pod spec is as before');
  assert.equal(after.metadata?.annotations?.['queuesplit.dev/original-config'], undefined);
  assert.equal(revision(after) - revision(before), 2, 'two rollouts: to the copy and back');
  const left = await core.listNamespacedConfigMap({
    namespace,
    labelSelector: 'queuesplit.dev/config-copy=true',
  });
  assert.deepEqual(
    left.items.map((c) => c.metadata?.name),
    [],
    'the copy is deleted',
  );
  const original = await core.readNamespacedConfigMap({ name: 'orders-config', namespace });
  assert.deepEqual(original.data, originalData(), 'the original as it was');
  const afterIds = ids(source, 'after', 5);
  await publishTo(ch, source, afterIds);
  await waitForAppReceived(
    'after handback the app consumes its source, named by its file, again',
    afterIds,
    60_000,
    source,
    source,
  );
  await waitForAppReceived('what was sent while Degraded reached the app', late, 60_000, source);
  const everything = new Set([
    ...records((r) => r.event === 'message').map((r) => (r.event === 'message' ? r.id : '')),
    ...mine,
  ]);
  for (const id of [...alice, ...plain, ...late, ...afterIds])
    assert.ok(everything.has(id), `${id} was delivered somewhere`);
});
