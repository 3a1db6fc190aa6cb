// A shadow is as durable as its source. The engine copies the source's
// replication factor, min.insync.replicas and max.message.bytes, forces cleanup.policy=delete
// and message.timestamp.type=CreateTime, and the preflight reads all of them back.
// Runs on the single env broker (RF=1); kafka-three-brokers.test.ts proves it on three brokers.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Admin } from 'kafkajs';
import { KafkaEngine } from '../../agent/kafka/engine';
import { kafkaHarness, type KafkaTopology } from './kafka/harness';
import { USER } from './delivery';
import { untilDone } from './steps';
import { testLogger, withSplit } from './support';

const h = kafkaHarness();
after(() => h.close());
let made = 0;

const SOURCE_CONFIG = {
  'min.insync.replicas': '2',
  'max.message.bytes': '2097152',
  'cleanup.policy': 'compact',
  'message.timestamp.type': 'LogAppendTime',
};
const NAMES = [...Object.keys(SOURCE_CONFIG), 'retention.ms', 'retention.bytes'];

async function configOf(a: Admin, topic: string): Promise<Record<string, string>> {
  const d = await a.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: 2, name: topic, configNames: NAMES }],
  });
  return Object.fromEntries(d.resources[0]!.configEntries.map((c) => [c.configName, c.configValue]));
}

async function replicationOf(a: Admin, topic: string): Promise<number[]> {
  const meta = await a.fetchTopicMetadata({ topics: [topic] });
  return meta.topics[0]!.partitions.map((p) => p.replicas.length);
}

describe('Kafka shadow durability', { concurrency: 1 }, () => {
  test("case 3: shadows copy the source's replication factor, min.insync.replicas and max.message.bytes, and the preflight reads them back", () =>
    withSplit(h, async (topo, engines) => {
      const t = topo as KafkaTopology;
      await h.withAdmin((a) =>
        a.alterConfigs({
          validateOnly: false,
          resources: [
            {
              type: 2,
              name: t.source,
              configEntries: Object.entries(SOURCE_CONFIG).map(([name, value]) => ({ name, value })),
            },
          ],
        }),
      );
      const e = engines.track(
        new KafkaEngine(h.config(t, `${t.label}-d${++made}`), { logger: testLogger() }),
      );
      await untilDone(() => e.prepare(), 'prepare');
      const [source, shadow, sourceRf, shadowRf] = await h.withAdmin(async (a) => [
        await configOf(a, t.source),
        await configOf(a, t.appShadow),
        await replicationOf(a, t.source),
        await replicationOf(a, t.appShadow),
      ]);
      assert.deepEqual(shadowRf, sourceRf, 'replication factor per partition');
      assert.deepEqual(shadow, {
        'min.insync.replicas': source['min.insync.replicas'],
        'max.message.bytes': source['max.message.bytes'],
        'cleanup.policy': 'delete',
        'message.timestamp.type': 'CreateTime',
        'retention.ms': '-1',
        'retention.bytes': '-1',
      });

      // Read-back: a shadow that already exists with a smaller max.message.bytes than its source
      // would refuse a record the source accepted, so the preflight refuses it by name.
      const bad = t.route('small', { [USER]: 'small' });
      await h.createTopic(bad.shadow, { 'max.message.bytes': '1000' });
      const routes = await e.reconcileRoutes(1, [bad]);
      assert.equal(routes.kind, 'rejected', JSON.stringify(routes));
      if (routes.kind === 'rejected') assert.match(JSON.stringify(routes.errors), /max\.message\.bytes=1000/);
    }));
});
