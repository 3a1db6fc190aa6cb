// Repeated queue-agent restarts during traffic (README "When the queue-agent restarts"): a
// developer's route is ACTIVE on a 5-partition Kafka topic and a RabbitMQ queue served by one
// queue-agent, records keep arriving, and the agent is killed with SIGKILL several times in a row,
// each time once its successor has reconciled. Every restart must classify the backlog that built
// up while it was down under the route table the controller published: no message of the active
// route reaches the app, and no message reaches both the app and the developer.
// (crash-recovery.test.ts kills once per phase, which never reaches the second restart in a row.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterFixture } from '../support/clusterFixture';
import { deployShop, waitForShopHandback } from '../support/shop';
import { pollUntil, sleep } from '../support/poll';
import { killQueueAgent } from '../support/processes';
import { appReceived, consumeQueueIds, publishTo } from '../support/rabbitSplit';
import { consumeIds, produceIds } from '../support/kafkaSplit';
import { activeSplit, getSplit, removeSplit } from '../support/splits';

const fx = clusterFixture('qs-restarts', { rabbitmq: true, kafka: true });

/** Kills in a row; the second is the one that used to recover an empty route table. */
const KILLS = 3;
const PARTITIONS = 5;

test(
  'queue-agent killed several times in a row during traffic: no active-route message reaches the app, none reaches two destinations, counts keep counting, the restarts are reported',
  { timeout: 15 * 60_000 },
  async () => {
    const { kc, namespace, conn, kafka, producer } = fx;
    const name = 'restarts';
    const user = 'kim';
    const ch = await conn.createConfirmChannel();
    const sources = await deployShop(fx, name, PARTITIONS);
    const { topic, queue } = sources;

    const split = await activeSplit(
      kc,
      namespace,
      { workload: name, queues: ['orders', 'invoices'], user },
      300_000,
    );
    const orders = split.status!.queues!.find((q) => q.name === 'orders')!.shadow!;
    const invoices = split.status!.queues!.find((q) => q.name === 'invoices')!.shadow!;
    const developer: string[] = [];
    const local = await consumeIds(kafka, orders.source!, orders.group!, developer);
    const localRabbit = await consumeQueueIds(conn, invoices.source!, developer);

    // Every 100 ms: 10 Kafka records (keyed by id, so across every partition) and 2 RabbitMQ
    // messages, half of each with the developer's header. A restart finds a backlog of seconds.
    const mine: string[] = [];
    const plain: string[] = [];
    let running = true;
    const flow = (async () => {
      for (let tick = 0; running; tick++) {
        const kafkaMine = Array.from({ length: 5 }, (_, i) => `${topic}-${user}-${tick}-${i}`);
        const kafkaPlain = Array.from({ length: 5 }, (_, i) => `${topic}-plain-${tick}-${i}`);
        await produceIds(producer, topic, kafkaMine, user);
        await produceIds(producer, topic, kafkaPlain);
        await publishTo(ch, queue, [`${queue}-${user}-${tick}`], user);
        await publishTo(ch, queue, [`${queue}-plain-${tick}`]);
        mine.push(...kafkaMine, `${queue}-${user}-${tick}`);
        plain.push(...kafkaPlain, `${queue}-plain-${tick}`);
        await sleep(100);
      }
    })();
    // What the developer's status lines show: the split's delivered count, read all along.
    const counts: number[] = [];
    const sampling = (async () => {
      while (running) {
        const s = await getSplit(kc, namespace, split.metadata.name).catch(() => undefined);
        if (s?.status?.delivered !== undefined) counts.push(s.status.delivered);
        await sleep(250);
      }
    })();
    try {
      await sleep(2000);
      for (let kill = 1; kill <= KILLS; kill++) {
        await killQueueAgent(kc, namespace, name);
        await sleep(2000); // the restarted agent serves traffic before the next kill
      }
    } finally {
      running = false;
      await Promise.all([flow, sampling]);
    }

    const app = () => new Set([...appReceived(topic), ...appReceived(queue)]);
    const published = [...mine, ...plain];
    await pollUntil(
      `every one of ${published.length} messages reached the app or ${user}`,
      async () => new Set([...developer, ...app()]),
      (got) => published.every((id) => got.has(id)),
      120_000,
    ).catch((err: unknown) => {
      const got = new Set([...developer, ...app()]);
      const lost = published.filter((id) => !got.has(id));
      throw new Error(`${String(err)}\nnot delivered: ${lost.slice(0, 20).join(', ')}`);
    });
    const appGot = app();
    const devGot = new Set(developer);
    const misrouted = mine.filter((id) => appGot.has(id));
    assert.deepEqual(
      misrouted.slice(0, 20),
      [],
      `${misrouted.length} of ${user}'s ${mine.length} messages (active route) reached the app after ${KILLS} agent restarts`,
    );
    const both = published.filter((id) => appGot.has(id) && devGot.has(id));
    assert.deepEqual(both.slice(0, 20), [], `${both.length} messages reached both the app and ${user}`);
    const strangers = plain.filter((id) => devGot.has(id));
    assert.deepEqual(strangers.slice(0, 20), [], `${user} received only ${user}'s messages`);
    await pollUntil(
      `the split reports the ${KILLS} agent restarts (AgentRestarted condition)`,
      async () =>
        (await getSplit(kc, namespace, split.metadata.name))?.status?.conditions?.find(
          (c) => c.type === 'AgentRestarted',
        )?.message ?? '',
      (message) => message.includes(`(${KILLS}x,`),
      30_000,
    );
    const drops = counts.filter((n, i) => i > 0 && n < counts[i - 1]!);
    assert.deepEqual(
      drops,
      [],
      `the split's delivered count kept counting across the restarts (samples ${counts.join(' ')})`,
    );
    console.log(
      `${KILLS} agent restarts: ${mine.length + plain.length} messages (${mine.length} ${user}'s), ` +
        `${developer.length - devGot.size} duplicate deliveries to ${user}`,
    );

    // Hand back, so the workload ends as it started (and the brokers hold nothing of the split).
    await local.disconnect();
    await localRabbit.close().catch(() => undefined);
    await removeSplit(kc, namespace, split.metadata.name, 300_000);
    await waitForShopHandback(kc, namespace, name, sources, { timeoutMs: 300_000 });
    await ch.close().catch(() => undefined);
  },
);
