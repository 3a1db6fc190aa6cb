// A workload with one Kafka topic and one RabbitMQ queue (the demo's sample service), split
// together: one queue-agent process runs both engines. alice's messages reach her session
// shadows on both brokers, everything else reaches the app, the agent's metrics (published
// counts, shadow lag, generations, time in phase; no route labels) and health endpoints tell
// the truth, and the handback gives the app both sources back without a loss. The app runs three
// replicas (one Kafka consumer group, three competing RabbitMQ consumers) under a
// PodDisruptionBudget that allows one pod down: the split is not refused, leaves the budget as it
// was, and the app goes through two rollouts (docs/design.md, "Disruption budgets").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppsV1Api, PolicyV1Api } from '@kubernetes/client-node';
import type { Consumer } from 'kafkajs';
import { clusterFixture } from '../support/clusterFixture';
import { deployShop, waitForShopHandback } from '../support/shop';
import { pollUntil } from '../support/poll';
import { appReceived, consumeQueueIds, ids, publishTo } from '../support/rabbitSplit';
import { activeSplit, removeSplit } from '../support/splits';
import { recordAppConsumers } from '../support/appConsumers';
import { consumeIds, produceIds } from '../support/kafkaSplit';
import {
  agentLog,
  agentPods,
  agentUrl,
  httpStatus,
  sampleValue,
  scrape,
  waitForNoAgent,
  type Sample,
} from '../support/agentMetrics';

const fx = clusterFixture('qs-split-kafka', { rabbitmq: true, kafka: true });

test('one Kafka topic and one RabbitMQ queue split together: routing, metrics, handback, no loss', async () => {
  const { kc, namespace, conn, ch, kafka, producer, services } = fx;
  const sources = await deployShop(fx, 'shop', 3);
  const { topic, queue } = sources;
  const policy = kc.makeApiClient(PolicyV1Api);
  await policy.createNamespacedPodDisruptionBudget({
    namespace,
    body: {
      metadata: { name: 'shop' },
      spec: { selector: { matchLabels: { app: 'shop' } }, maxUnavailable: 1 },
    },
  });
  const budget = await policy.readNamespacedPodDisruptionBudget({ name: 'shop', namespace });
  const apps = kc.makeApiClient(AppsV1Api);
  const revision = async () =>
    Number(
      (await apps.readNamespacedDeployment({ name: 'shop', namespace })).metadata?.annotations?.[
        'deployment.kubernetes.io/revision'
      ],
    );
  const revisionBefore = await revision();
  const preOrders = ids(topic, 'pre', 4);
  const preInvoices = ids(queue, 'pre', 4);
  await produceIds(producer, topic, preOrders);
  await publishTo(ch, queue, preInvoices);

  const started = Date.now();
  const consumers = await recordAppConsumers(kc, namespace, 'shop');
  const split = await activeSplit(
    kc,
    namespace,
    { workload: 'shop', queues: ['orders', 'invoices'], user: 'alice' },
    240_000,
  );
  console.log(
    `activation, Kafka + RabbitMQ (request → Active): ${((Date.now() - started) / 1000).toFixed(1)}s`,
  );
  // The rollout proof's evidence: while the app was redirected the agent read the consumers on
  // each application shadow live from the broker (RabbitMQ: the three pods' consumers; Kafka:
  // group members with a share of the shadow).
  const seen = (await consumers.stop()).appShadow;
  console.log(`application shadow consumers while redirected: ${JSON.stringify(seen)}`);
  assert.ok(
    (seen.orders ?? 0) >= 1 && (seen.invoices ?? 0) >= 1,
    `consumers on both shadows: ${JSON.stringify(seen)}`,
  );
  const orders = split.status?.queues?.find((q) => q.name === 'orders');
  const invoices = split.status?.queues?.find((q) => q.name === 'invoices');
  const sessionTopic = orders?.shadow?.source;
  const sessionGroup = orders?.shadow?.group;
  const sessionQueue = invoices?.shadow?.source;
  assert.ok(sessionTopic && sessionGroup && sessionQueue, 'the status names both session shadows');
  assert.deepEqual(orders?.envOverrides, { SOURCE_TOPIC: sessionTopic, KAFKA_GROUP: sessionGroup });
  assert.deepEqual(invoices?.envOverrides, { SOURCE_QUEUE: sessionQueue });

  // One queue-agent process hosts both engines.
  const pods = await agentPods(kc, namespace, 'shop');
  assert.equal(pods.length, 1, 'one queue-agent pod for the workload');
  const engines = new Set(agentLog(pods[0]!).map((l) => l.engine));
  assert.ok(engines.has('kafka') && engines.has('rabbitmq'), `engines in the one agent: ${[...engines]}`);

  const alice = { orders: ids(topic, 'alice', 8), invoices: ids(queue, 'alice', 8) };
  const bob = { orders: ids(topic, 'bob', 6), invoices: ids(queue, 'bob', 6) };
  const plain = { orders: ids(topic, 'plain', 6), invoices: ids(queue, 'plain', 6) };
  await produceIds(producer, topic, alice.orders, 'alice');
  await produceIds(producer, topic, bob.orders, 'bob');
  await produceIds(producer, topic, plain.orders);
  await publishTo(ch, queue, alice.invoices, 'alice');
  await publishTo(ch, queue, bob.invoices, 'bob');
  await publishTo(ch, queue, plain.invoices);

  // Before alice reads them, her messages wait in her session shadows: the lag gauges say so.
  const agent = await agentUrl(pods[0]!);
  const lagOf = (samples: Sample[], queue: string, destination: string) =>
    sampleValue(samples, 'queuesplit_shadow_lag_messages', { queue, destination });
  const waiting = await pollUntil(
    'the agent reports the unconsumed session messages as lag',
    async () => (await scrape(agent)).samples,
    (s) =>
      lagOf(s, 'invoices', 'session') === alice.invoices.length &&
      (lagOf(s, 'orders', 'session') ?? 0) >= alice.orders.length,
    60_000,
  );
  console.log(
    `lag before alice reads: orders session ${lagOf(waiting, 'orders', 'session')}, invoices session ${lagOf(waiting, 'invoices', 'session')}`,
  );

  // alice's local consumers read her session shadows with the env overrides the status gave.
  const mineOrders: string[] = [];
  const mineInvoices: string[] = [];
  const local: Consumer = await consumeIds(kafka, sessionTopic, sessionGroup, mineOrders);
  const localCh = await consumeQueueIds(conn, sessionQueue, mineInvoices);
  await pollUntil(
    'alice received her messages on both brokers',
    async () => [new Set(mineOrders).size, new Set(mineInvoices).size],
    ([o, i]) => o === alice.orders.length && i === alice.invoices.length,
    90_000,
  );
  const appExpected = [
    ...preOrders,
    ...bob.orders,
    ...plain.orders,
    ...preInvoices,
    ...bob.invoices,
    ...plain.invoices,
  ];
  await pollUntil(
    'the app processed everything else on both brokers',
    async () => new Set([...appReceived(topic), ...appReceived(queue)]),
    (got) => appExpected.every((id) => got.has(id)),
    90_000,
  );
  assert.deepEqual([...new Set(mineOrders)].sort(), [...alice.orders].sort(), 'alice got exactly her orders');
  assert.deepEqual(
    [...new Set(mineInvoices)].sort(),
    [...alice.invoices].sort(),
    'alice got exactly her invoices',
  );
  const app = new Set([...appReceived(topic), ...appReceived(queue)]);
  assert.ok(
    ![...alice.orders, ...alice.invoices].some((id) => app.has(id)),
    'the app never saw an alice message',
  );

  // Metrics and health, from the agent's own endpoint.
  assert.equal(await httpStatus(agent, '/healthz'), 200, 'liveness answers ok');
  assert.equal(await httpStatus(agent, '/readyz'), 200, 'readiness answers ok');
  const { text, samples } = await pollUntil(
    'the agent reports what it published, desired = observed generation',
    () => scrape(agent),
    ({ samples: s }) =>
      sampleValue(s, 'queuesplit_messages_published', { queue: 'orders', destination: 'session' }) ===
        alice.orders.length &&
      sampleValue(s, 'queuesplit_messages_published', { queue: 'invoices', destination: 'session' }) ===
        alice.invoices.length &&
      sampleValue(s, 'queuesplit_desired_generation') === sampleValue(s, 'queuesplit_observed_generation'),
    30_000,
  );
  for (const q of ['orders', 'invoices']) {
    const toApp =
      sampleValue(samples, 'queuesplit_messages_published', { queue: q, destination: 'app' }) ?? 0;
    assert.ok(toApp >= bob.orders.length + plain.orders.length, `${q}: ${toApp} published to the app shadow`);
    assert.equal(sampleValue(samples, 'queuesplit_engine_healthy', { queue: q }), 1, `${q} engine healthy`);
    assert.equal(
      sampleValue(samples, 'queuesplit_publishes_in_flight', { queue: q }),
      0,
      `${q}: nothing in flight`,
    );
    assert.equal(sampleValue(samples, 'queuesplit_messages_retrying', { queue: q }), 0, `${q}: no retries`);
    assert.equal(
      samples.filter((x) => x.name === 'queuesplit_step_failures_total' && x.labels.queue === q).length,
      0,
      `${q}: no failed step`,
    );
  }
  assert.ok(
    (sampleValue(samples, 'queuesplit_desired_generation') ?? 0) > 0,
    'a desired generation is reported',
  );
  const drained = await pollUntil(
    'the lag gauges fall once alice and the app have read their shadows',
    async () => (await scrape(agent)).samples,
    (s) =>
      lagOf(s, 'invoices', 'session') === 0 &&
      lagOf(s, 'invoices', 'app') === 0 &&
      // Kafka lag is end minus committed offsets: each partition's last transaction marker stays.
      (lagOf(s, 'orders', 'session') ?? Infinity) <= 3 &&
      (lagOf(s, 'orders', 'app') ?? Infinity) <= 3 &&
      // Everything waiting in the sources was copied: the split adds nothing to the app's lag.
      sampleValue(s, 'queuesplit_source_backlog_messages', { queue: 'invoices' }) === 0 &&
      (sampleValue(s, 'queuesplit_source_backlog_messages', { queue: 'orders' }) ?? Infinity) <= 3,
    60_000,
  );
  console.log(
    `lag after reading: orders session ${lagOf(drained, 'orders', 'session')} app ${lagOf(drained, 'orders', 'app')}, invoices session ${lagOf(drained, 'invoices', 'session')} app ${lagOf(drained, 'invoices', 'app')}`,
  );
  const inPhase = sampleValue(samples, 'queuesplit_time_in_phase_seconds', { phase: 'ACTIVE' });
  assert.ok(inPhase !== undefined && inPhase >= 0, `time in phase ACTIVE reported: ${inPhase}`);
  const labelNames = new Set(samples.flatMap((s) => Object.keys(s.labels)));
  assert.ok(![...labelNames].some((l) => /route/i.test(l)), `no route label: ${[...labelNames]}`);
  assert.ok(!text.includes(split.spec.routeId), 'no route id in the metrics');
  assert.ok(!text.includes('alice'), 'no header value in the metrics');
  console.log(
    `metrics: published orders app=${sampleValue(samples, 'queuesplit_messages_published', { queue: 'orders', destination: 'app' })} ` +
      `session=${alice.orders.length}; invoices app=${sampleValue(samples, 'queuesplit_messages_published', { queue: 'invoices', destination: 'app' })} ` +
      `session=${alice.invoices.length}; generation ${sampleValue(samples, 'queuesplit_observed_generation')}; ACTIVE for ${inPhase}s`,
  );
  const log = JSON.stringify(agentLog(pods[0]!));
  assert.ok(!log.includes('"alice"'), 'the agent log carries no header value');
  for (const url of [services.amqpUrl, services.inCluster.amqpUrl])
    assert.ok(!log.includes(url), 'the agent log carries no broker URL with credentials');

  await local.disconnect();
  await localCh.close();

  // Stop: both routes drain, the app gets its topic (with its own group) and queue back.
  const stopped = Date.now();
  const restoring = await recordAppConsumers(kc, namespace, 'shop');
  await removeSplit(kc, namespace, split.metadata.name, 240_000);
  await waitForShopHandback(kc, namespace, 'shop', sources);
  // The restore's evidence: the agent read the restored app's consumers on both sources.
  const onSources = (await restoring.stop()).source;
  console.log(`source consumers while restored: ${JSON.stringify(onSources)}`);
  assert.ok(
    (onSources.orders ?? 0) >= 1 && (onSources.invoices ?? 0) >= 1,
    `consumers on both sources: ${JSON.stringify(onSources)}`,
  );
  console.log(
    `handback, Kafka + RabbitMQ (delete → app on its sources): ${((Date.now() - stopped) / 1000).toFixed(1)}s`,
  );
  await waitForNoAgent(kc, namespace, 'shop', 'the queue-agent is reaped');
  const budgetAfter = await policy.readNamespacedPodDisruptionBudget({ name: 'shop', namespace });
  assert.deepEqual(budgetAfter.spec, budget.spec, 'the disruption budget is as it was');
  assert.equal((await revision()) - revisionBefore, 2, 'two rollouts of the app: to its shadows and back');

  const afterIds = { orders: ids(topic, 'after', 4), invoices: ids(queue, 'after', 4) };
  await produceIds(producer, topic, afterIds.orders, 'alice');
  await publishTo(ch, queue, afterIds.invoices, 'alice');
  await pollUntil(
    'after handback the app consumes both sources again, alice header or not',
    async () => new Set([...appReceived(topic, topic), ...appReceived(queue, queue)]),
    (got) => [...afterIds.orders, ...afterIds.invoices].every((id) => got.has(id)),
    90_000,
  );
  const everywhere = new Set([...appReceived(topic), ...appReceived(queue), ...mineOrders, ...mineInvoices]);
  const all = [
    ...preOrders,
    ...preInvoices,
    ...alice.orders,
    ...alice.invoices,
    ...bob.orders,
    ...bob.invoices,
    ...plain.orders,
    ...plain.invoices,
    ...afterIds.orders,
    ...afterIds.invoices,
  ];
  assert.deepEqual(
    all.filter((id) => !everywhere.has(id)),
    [],
    'no message was lost',
  );
});
