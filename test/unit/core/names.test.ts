// Resource names and ownership keys: bounded, deterministic, distinct for distinct inputs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  kubernetesObjectNames,
  labelValue,
  MAX_NAME_LENGTH,
  queueSplitName,
  ROUTE_ID_PATTERN,
  routeIdFromRandomBytes,
  type RouteIdentity,
} from '../../../core/names';
import { kafkaQueueNames, kafkaRouteNames } from '../../../core/providers/kafka/names';
import { kafkaOwnershipKey, normaliseKafkaBrokers } from '../../../core/providers/kafka/ownership';
import {
  DESTINATION_EXCHANGE_SUFFIX_BYTES,
  destinationExchangeName,
  rabbitQueueNames,
  rabbitRouteNames,
} from '../../../core/providers/rabbitmq/names';
import { validateConfig, type RabbitEngineConfig } from '../../../agent/rabbitmq/config';
import { normaliseAmqpEndpoint, rabbitOwnershipKey } from '../../../core/providers/rabbitmq/ownership';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const KAFKA_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

function allNames(id: RouteIdentity & { workloadName: string }): string[] {
  return [
    ...Object.values(kafkaQueueNames(id)),
    ...Object.values(kafkaRouteNames(id)),
    ...Object.values(rabbitQueueNames(id)),
    ...Object.values(rabbitRouteNames(id)),
    ...Object.values(kubernetesObjectNames(id)),
    queueSplitName({ owner: id.installId, workloadName: id.workloadName, routeId: id.routeId }),
  ];
}

const identity = fc.record({
  installId: fc.string({ maxLength: 300 }),
  workloadUid: fc.string({ maxLength: 100 }),
  queue: fc.string({ maxLength: 300 }),
  epoch: fc.nat(),
  routeId: fc.string({ maxLength: 100 }),
  workloadName: fc.string({ maxLength: 300 }),
});

describe('resource names', () => {
  test('every name is a DNS-1123 label (≤ 63), so also a valid Kafka topic/group and RabbitMQ queue', () => {
    fc.assert(
      fc.property(identity, (id) => {
        for (const name of allNames(id)) {
          assert.ok(name.length <= MAX_NAME_LENGTH, name);
          assert.match(name, DNS_LABEL);
          assert.match(name, KAFKA_NAME);
          assert.ok(Buffer.byteLength(name) <= 255);
          assert.ok(name.startsWith('qs-'));
        }
      }),
    );
  });

  test('names are deterministic and readable', () => {
    const id = {
      installId: 'i1',
      workloadUid: 'uid-1',
      queue: 'orders',
      epoch: 3,
      routeId: 'r1',
      workloadName: 'shop',
    };
    assert.deepEqual(allNames(id), allNames({ ...id }));
    assert.match(kafkaQueueNames(id).appShadowTopic, /^qs-kapp-orders-[a-z2-7]{20}$/);
    assert.match(kubernetesObjectNames(id).agentDeployment, /^qs-agent-shop-[a-z2-7]{20}$/);
  });

  test('each input changes every name (install, workload, queue, epoch, route)', () => {
    const base = { installId: 'i1', workloadUid: 'uid-1', queue: 'orders', epoch: 3, routeId: 'r1' };
    const variants = [
      { ...base, installId: 'i2' },
      { ...base, workloadUid: 'uid-2' },
      { ...base, queue: 'invoices' },
      { ...base, epoch: 4 },
    ];
    for (const variant of variants) {
      assert.notEqual(kafkaQueueNames(variant).appShadowTopic, kafkaQueueNames(base).appShadowTopic);
      assert.notEqual(rabbitRouteNames(variant).sessionQueue, rabbitRouteNames(base).sessionQueue);
    }
    assert.notEqual(
      kafkaRouteNames({ ...base, routeId: 'r2' }).sessionTopic,
      kafkaRouteNames(base).sessionTopic,
    );
  });

  test('the readable part is only decoration: a long topic-like queue name never decides the name', () => {
    const a = { installId: 'i', workloadUid: 'u', queue: 'x'.repeat(100) + 'a', epoch: 1 };
    const b = { ...a, queue: 'x'.repeat(100) + 'b' };
    assert.notEqual(kafkaQueueNames(a).appShadowTopic, kafkaQueueNames(b).appShadowTopic);
  });

  test('distinct inputs do not collide in practice (20 000 identities, every role)', () => {
    const seen = new Map<string, string>();
    for (let i = 0; i < 2000; i++) {
      for (let epoch = 0; epoch < 10; epoch++) {
        const id = {
          installId: 'inst',
          workloadUid: `uid-${i % 7}`,
          queue: `q${i}`,
          epoch,
          routeId: `route${i}`,
        };
        const names = [...Object.values(kafkaQueueNames(id)), ...Object.values(kafkaRouteNames(id))];
        for (const name of names) {
          const owner = `${JSON.stringify(id)}`;
          const previous = seen.get(name);
          assert.ok(previous === undefined || previous === owner, `collision on ${name}`);
          seen.set(name, owner);
        }
      }
    }
    assert.equal(seen.size, 2000 * 10 * 8);
  });
});

describe('labels and route ids', () => {
  test('labelValue keeps valid values and makes any text a valid, distinct label value', () => {
    assert.equal(labelValue('orders'), 'orders');
    assert.equal(labelValue('My.Label_1'), 'My.Label_1');
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const label = labelValue(text);
        assert.ok(label.length <= 63);
        assert.match(label, /^([A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?)?$/);
      }),
    );
    assert.notEqual(labelValue('a b'), labelValue('a  b'));
  });

  test('route ids from 16 random bytes match the pattern', () => {
    const id = routeIdFromRandomBytes(Uint8Array.from({ length: 16 }, (_, i) => i * 37));
    assert.match(id, ROUTE_ID_PATTERN);
    assert.doesNotMatch(routeIdFromRandomBytes(new Uint8Array(4)), ROUTE_ID_PATTERN);
  });
});

describe('ownership keys', () => {
  const key = (r: { ok: boolean; value?: string }) => {
    assert.ok(r.ok);
    return r.value!;
  };

  test('Kafka: broker order, case, ports and listener prefixes do not matter; topic and group do', () => {
    const a = key(kafkaOwnershipKey({ brokers: 'Kafka-1:9092,kafka-2:9092', topic: 'orders', group: 'g' }));
    const b = key(
      kafkaOwnershipKey({ brokers: 'SASL_SSL://kafka-2:9093, kafka-1.', topic: 'orders', group: 'g' }),
    );
    assert.equal(a, b);
    assert.notEqual(
      a,
      key(kafkaOwnershipKey({ brokers: 'kafka-1:9092,kafka-2:9092', topic: 'orders', group: 'h' })),
    );
    assert.notEqual(
      a,
      key(kafkaOwnershipKey({ brokers: 'kafka-1:9092,kafka-2:9092', topic: 'Orders', group: 'g' })),
    );
    assert.match(a, /^own-[a-z2-7]{32}$/);
  });

  test('RabbitMQ: credentials, scheme and port are dropped; vhost and queue count', () => {
    const a = key(rabbitOwnershipKey({ url: 'amqp://user:secret@Rabbit:5672', queue: 'q' }));
    assert.equal(a, key(rabbitOwnershipKey({ url: 'amqps://other:pw@rabbit:5671/%2f', queue: 'q' })));
    assert.notEqual(a, key(rabbitOwnershipKey({ url: 'amqp://rabbit/prod', queue: 'q' })));
    assert.notEqual(a, key(rabbitOwnershipKey({ url: 'amqp://rabbit', queue: 'q2' })));
    assert.ok(!a.includes('secret'));
  });

  test('bad endpoints are errors, not keys', () => {
    assert.equal(normaliseKafkaBrokers('').ok, false);
    assert.equal(normaliseKafkaBrokers('a b:1').ok, false);
    assert.equal(normaliseAmqpEndpoint('http://x').ok, false);
    assert.equal(normaliseAmqpEndpoint('not a url').ok, false);
    assert.equal(normaliseAmqpEndpoint('amqp://h/%E0%A4%A').ok, false);
    assert.deepEqual(normaliseAmqpEndpoint('amqp://h/v%2Fx'), {
      ok: true,
      value: { host: 'h', vhost: 'v/x' },
    });
  });
});

describe("RabbitMQ destinations' exchanges (agent/rabbitmq/routing.ts)", () => {
  const id = { installId: 'i1', workloadUid: 'uid-1', queue: 'orders', epoch: 3, routeId: 'r1' };
  const routing = rabbitQueueNames(id).appShadowQueue;

  test('named after the routing exchange, a fixed suffix, deterministic, one per destination', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 300 }), (a, b) => {
        const name = destinationExchangeName(routing, a);
        assert.ok(name.startsWith(`${routing}.to-`), name);
        assert.equal(Buffer.byteLength(name), Buffer.byteLength(routing) + DESTINATION_EXCHANGE_SUFFIX_BYTES);
        assert.equal(name, destinationExchangeName(routing, a));
        if (a !== b) assert.notEqual(name, destinationExchangeName(routing, b));
      }),
    );
    // The shadows' names are at most 63 characters: far within RabbitMQ's 255 bytes.
    assert.ok(Buffer.byteLength(destinationExchangeName(routing, rabbitRouteNames(id).sessionQueue)) <= 255);
  });

  test('never the routing exchange itself (the single headers exchange earlier agents used)', () => {
    assert.notEqual(destinationExchangeName(routing, routing), routing);
  });

  test('a configured application shadow leaves room for them within 255 bytes', () => {
    const config: RabbitEngineConfig = {
      activationId: 'a',
      epoch: 1,
      amqpUrl: 'amqp://rabbit',
      managementUrl: 'http://rabbit:15672',
      sourceQueue: 'orders',
      appShadow: routing,
      lockQueue: rabbitQueueNames(id).lockQueue,
    };
    const room = 255 - DESTINATION_EXCHANGE_SUFFIX_BYTES;
    assert.deepEqual(validateConfig({ ...config, appShadow: 'a'.repeat(room) }), []);
    const [error, ...more] = validateConfig({ ...config, appShadow: 'a'.repeat(room + 1) });
    assert.equal(error?.path, 'appShadow');
    assert.match(error?.problem ?? '', /no room for the routing exchanges/);
    assert.deepEqual(more, []);
  });
});
