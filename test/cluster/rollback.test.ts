// A failed rollout proves its rollback: the demo's Kafka + RabbitMQ service is deployed so that
// it crashes when pointed at anything but its own sources (FIXTURE_CRASH_ON_SOURCE), so the
// redirected pods crash-loop. The controller notices, aborts (ABORTING_ACTIVATION → RESTORING_APP
// → handed back), reports the split Failed with a readable reason and a safe next action,
// restores the original env and replicas, and every message sent before and during the failed
// cutover reaches the app from its own topic and queue. Second: someone scales the workload by
// hand while the split activates; the activation aborts into the same proved rollback. Third:
// the queue-agent's copied env cannot build an engine; the split fails without touching the app.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { shopDeployment } from '../../fixtures/shop';
import { clusterFixture } from '../support/clusterFixture';
import { fixtureDeployment, scale, waitForReadyPods } from '../support/kube';
import { pollUntil } from '../support/poll';
import {
  appReceived,
  ids,
  publishTo,
  rabbitApp,
  rabbitDeclaration,
  waitForAppReceived,
  waitForRabbitHandback,
} from '../support/rabbitSplit';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import { removeSplit, splitFor, waitForSplitPhase } from '../support/splits';
import { uniqueName } from '../support/services';
import { createSecret } from '../support/secrets';
import { createTopic, produceIds } from '../support/kafkaSplit';
import { waitForNoAgent } from '../support/agentMetrics';
import { PhaseWatch } from '../support/phaseWatch';
import { waitForShopHandback } from '../support/shop';

const fx = clusterFixture('qs-rollback', { rabbitmq: true, kafka: true });

/** The persisted phases, in order, from `first` on: the proved rollback path back to IDLE. */
function assertRolledBack(watch: PhaseWatch, first: string): void {
  const seen = watch.timeline.map((s) => s.phase);
  const order = [first, 'ABORTING_ACTIVATION', 'RESTORING_APP', '(handed back)'];
  const at = order.map((p) => seen.indexOf(p));
  assert.ok(
    at.every((i) => i >= 0),
    `every rollback phase was persisted: ${seen.join(' → ')}`,
  );
  assert.deepEqual(
    [...at].sort((a, b) => a - b),
    at,
    `in order: ${seen.join(' → ')}`,
  );
  assert.ok(!seen.includes('ACTIVE') && !seen.includes('DEGRADED'), `never active nor degraded: ${seen}`);
}

test('a redirected app that crash-loops: the split fails, the rollback is proved, nothing is lost', async () => {
  const { kc, namespace, ch, kafka, producer, services } = fx;
  const topic = uniqueName('rb-orders');
  const group = uniqueName('rb-group');
  const queue = uniqueName('rb-invoices');
  await createTopic(kafka, topic, 3);
  await ch.assertQueue(queue, { durable: true });
  const body = shopDeployment(
    {
      kafkaBrokers: services.inCluster.kafkaBrokers.join(','),
      amqpUrl: services.inCluster.amqpUrl,
      managementUrl: services.inCluster.rabbitManagementUrl,
    },
    { namespace, name: 'shop', ordersTopic: topic, appGroup: group, invoicesQueue: queue, replicas: 2 },
  );
  // Every shadow Queue Split names starts with `qs-`: the app runs on its own sources only.
  for (const c of body.spec!.template.spec!.containers)
    c.env!.push({ name: 'FIXTURE_CRASH_ON_SOURCE', value: '^qs-' });
  await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body });
  await waitForReadyPods(kc, namespace, 'shop', 2);

  const pre = { orders: ids(topic, 'pre', 5), invoices: ids(queue, 'pre', 5) };
  await produceIds(producer, topic, pre.orders);
  await publishTo(ch, queue, pre.invoices);
  const during = {
    orders: [...ids(topic, 'during', 5), ...ids(topic, 'during-alice', 3)],
    invoices: [...ids(queue, 'during', 5), ...ids(queue, 'during-alice', 3)],
  };
  let sentDuring = false;
  const watch = new PhaseWatch(kc, namespace, 'shop', async (phase) => {
    if (phase !== 'REDIRECTING_APP' || sentDuring) return;
    // The pump owns the sources now: these go to the application shadows, which the crashing
    // pods never read. The rollback must bring them back.
    sentDuring = true;
    await produceIds(producer, topic, during.orders.slice(0, 5));
    await produceIds(producer, topic, during.orders.slice(5), 'alice');
    await publishTo(ch, queue, during.invoices.slice(0, 5));
    await publishTo(ch, queue, during.invoices.slice(5), 'alice');
  });
  watch.start();
  try {
    const started = Date.now();
    const split = await splitFor(kc, namespace, {
      workload: 'shop',
      queues: ['orders', 'invoices'],
      user: 'alice',
    });
    const failed = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Failed', 300_000);
    console.log(`failed rollout noticed (request → Failed): ${((Date.now() - started) / 1000).toFixed(1)}s`);
    const condition = failed.status?.conditions?.[0];
    console.log(`status: ${condition?.reason}: ${condition?.message}`);
    assert.equal(condition?.reason, 'ActivationFailed');
    assert.match(condition?.message ?? '', /crash-looping/, 'the reason names the crashing pod');
    assert.match(
      condition?.message ?? '',
      /Nothing was lost/,
      'the message says what happened to the messages',
    );
    assert.match(failed.status?.nextAction ?? '', /start the split again/, 'a safe next action');

    await waitForShopHandback(kc, namespace, 'shop', { topic, group, queue }, { replicas: 2 });
    console.log(`rolled back (request → app restored): ${((Date.now() - started) / 1000).toFixed(1)}s`);
    await watch.untilRemoved(60_000);
    console.log(`phases: ${watch.describe()}`);
    assertRolledBack(watch, 'REDIRECTING_APP');
    assert.ok(sentDuring, 'messages were sent during the failed cutover');
    await waitForNoAgent(kc, namespace, 'shop', 'the queue-agent is reaped');

    const afterIds = { orders: ids(topic, 'after', 3), invoices: ids(queue, 'after', 3) };
    await produceIds(producer, topic, afterIds.orders, 'alice');
    await publishTo(ch, queue, afterIds.invoices, 'alice');
    const expected = [
      ...pre.orders,
      ...during.orders,
      ...afterIds.orders,
      ...pre.invoices,
      ...during.invoices,
      ...afterIds.invoices,
    ];
    await pollUntil(
      'the restored app consumed everything sent before, during and after the failed cutover',
      async () => new Set([...appReceived(topic), ...appReceived(queue)]),
      (got) => expected.every((id) => got.has(id)),
      120_000,
    );
    const fromSources = new Set([...appReceived(topic, topic), ...appReceived(queue, queue)]);
    assert.deepEqual(
      [...during.orders, ...during.invoices].filter((id) => !fromSources.has(id)),
      [],
      'the messages of the failed cutover came back to the sources and were read there',
    );
    await removeSplit(kc, namespace, split.metadata.name);
  } finally {
    watch.stop();
  }
});

test('a manual scale while the split activates aborts into the proved rollback', async () => {
  const { kc, namespace, ch } = fx;
  const source = await rabbitApp(fx, 'scaled', { replicas: 2 });
  const pre = ids(source, 'pre', 5);
  await publishTo(ch, source, pre);
  const during = ids(source, 'during', 5);
  let scaledIn = '';
  const watch = new PhaseWatch(kc, namespace, 'scaled', async (phase) => {
    if (phase !== 'STARTING_PUMP' || scaledIn) return;
    scaledIn = phase;
    await scale(kc, namespace, 'scaled', 3); // an operator, unaware of the split
    await publishTo(ch, source, during);
  });
  watch.start();
  try {
    const started = Date.now();
    const split = await splitFor(kc, namespace, { workload: 'scaled', user: 'alice' });
    const failed = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Failed', 240_000);
    console.log(`manual scale noticed (request → Failed): ${((Date.now() - started) / 1000).toFixed(1)}s`);
    const message = failed.status?.conditions?.[0]?.message ?? '';
    console.log(`status: ${message}`);
    assert.match(message, /scaled to 3 replicas by someone else/, 'the reason names the manual scale');
    assert.match(failed.status?.nextAction ?? '', /start the split again/, 'a safe next action');
    await waitForRabbitHandback(kc, namespace, 'scaled', source, { replicas: 2 });
    await watch.untilRemoved(60_000);
    console.log(`phases: ${watch.describe()}`);
    assertRolledBack(watch, scaledIn);
    const afterIds = ids(source, 'after', 3);
    await publishTo(ch, source, afterIds, 'alice');
    await waitForAppReceived(
      'the restored app consumed everything sent before, during and after',
      [...pre, ...during, ...afterIds],
      90_000,
      source,
    );
    await removeSplit(kc, namespace, split.metadata.name);
  } finally {
    watch.stop();
  }
});

test('an agent env that cannot build an engine fails the split at PREPARING; the app is untouched', async () => {
  const { kc, namespace, ch, services } = fx;
  const source = uniqueName('rb-config');
  await ch.assertQueue(source, { durable: true });
  const core = kc.makeApiClient(CoreV1Api);
  // The app does not use the management URL; the queue-agent needs it and gets an empty value.
  await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: 'broker-config' }, data: { management: '' } },
  });
  await createSecret(kc, namespace, 'amqp', { url: services.inCluster.amqpUrl });
  await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace,
    body: fixtureDeployment({
      name: 'misconfigured',
      image: 'queuesplit/fixture-rabbitmq-consumer',
      replicas: 1,
      annotations: { [QUEUE_CONFIG_ANNOTATION]: rabbitDeclaration },
      env: [
        { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: 'amqp', key: 'url' } } },
        {
          name: 'RABBITMQ_MANAGEMENT_URL',
          valueFrom: { configMapKeyRef: { name: 'broker-config', key: 'management' } },
        },
        { name: 'SOURCE_QUEUE', value: source },
      ],
    }),
  });
  const [appPod] = await waitForReadyPods(kc, namespace, 'misconfigured', 1);
  const watch = new PhaseWatch(kc, namespace, 'misconfigured', async () => undefined);
  watch.start();
  try {
    const split = await splitFor(kc, namespace, { workload: 'misconfigured', user: 'alice' });
    const failed = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Failed', 120_000);
    const message = failed.status?.conditions?.[0]?.message ?? '';
    console.log(`status: ${message}`);
    assert.match(
      message,
      /RABBITMQ_MANAGEMENT_URL .* is empty in the queue-agent pod/,
      'names the missing env',
    );
    await watch.untilRemoved(60_000);
    console.log(`phases: ${watch.describe()}`);
    const seen = watch.timeline.map((x) => x.phase);
    assert.ok(
      !seen.includes('DEGRADED') && !seen.includes('QUIESCING_APP'),
      `failed before touching the app: ${seen}`,
    );
    assert.ok(seen.includes('ABORTING_ACTIVATION'), `through the rollback: ${seen}`);
    const [still] = await waitForReadyPods(kc, namespace, 'misconfigured', 1);
    assert.equal(still?.metadata?.name, appPod?.metadata?.name, 'the app pod was never restarted');
    await waitForNoAgent(kc, namespace, 'misconfigured', 'no queue-agent left');
    await removeSplit(kc, namespace, split.metadata.name);
  } finally {
    watch.stop();
  }
});
