// Checkpoints written by the agent before the engine kernel (the controller keeps them across
// upgrades): an engine of this version recovers each and writes it back byte for byte. The
// fixtures were produced by that version's encodeCheckpoint; phase `cleaned` needs no broker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Checkpoint, Engine } from '../../../agent/engine/contract';
import { KafkaEngine } from '../../../agent/kafka/engine';
import { RabbitEngine } from '../../../agent/rabbitmq/engine';

const KAFKA = `{"provider":"kafka","format":1,"state":{"activationId":"inst/uid-1","epoch":3,"sourceTopic":"orders","appGroup":"orders-app","appShadow":"qs-kapp-orders-x","appShadowGroup":"qs-kappg-orders-x","splitterGroup":"qs-ksplit-orders-x","transactionalId":"qs-ktx-orders-x","phase":"cleaned","partitions":3,"generation":4,"routes":[{"routeId":"r-alice","filter":{"x-user":"alice"},"shadow":"qs-kses-a","sessionGroup":"qs-ksesg-a","drainGroup":"qs-kdrain-a"}],"removed":[{"routeId":"r-bob","shadow":"qs-kses-b","sessionGroup":"qs-ksesg-b","drainGroup":"qs-kdrain-b"}],"retained":[{"kind":"shadow","name":"qs-rses-kept","routeId":"r-old","reason":"quorum queues have no conditional delete","verifiedEmptyAt":"2026-11-30T10:00:00.000Z"}],"seed":[{"partition":0,"offset":"5"},{"partition":1,"offset":"0"}],"frontier":[{"partition":0,"offset":"9"}]}}`;

const RABBIT = `{"provider":"rabbitmq","format":1,"state":{"activationId":"inst/uid-2","epoch":1,"sourceQueue":"invoices","appShadow":"qs-rapp-invoices-x","lockQueue":"qs-rlock-invoices-x","phase":"cleaned","sourceType":"quorum","shadowArguments":{"x-queue-type":"quorum","x-dead-letter-exchange":"dlx"},"generation":2,"routes":[{"routeId":"r-alice","filter":{"x-user":"alice"},"shadow":"qs-rses-a"}],"removed":[{"routeId":"r-old","shadow":"qs-rses-kept"}],"retained":[{"kind":"shadow","name":"qs-rses-kept","routeId":"r-old","reason":"quorum queues have no conditional delete","verifiedEmptyAt":"2026-11-30T10:00:00.000Z"}]}}`;

/** Recovers `text` into `engine`, asserts it is written back unchanged, and closes the engine. */
async function roundTrip(engine: Engine, text: string, more: () => void): Promise<void> {
  try {
    const recovered = await engine.recover(JSON.parse(text) as Checkpoint);
    assert.equal(recovered.kind, 'done', JSON.stringify(recovered));
    if (recovered.kind === 'done') assert.equal(JSON.stringify(recovered.checkpoint), text);
    more();
  } finally {
    await engine.close();
  }
}

test('a Kafka checkpoint of the previous version is recovered and written back byte for byte', async () => {
  const engine = new KafkaEngine({
    activationId: 'inst/uid-1',
    epoch: 3,
    connection: { brokers: ['127.0.0.1:1'] },
    sourceTopic: 'orders',
    appGroup: 'orders-app',
    offsetReset: 'earliest',
    appShadow: 'qs-kapp-orders-x',
    appShadowGroup: 'qs-kappg-orders-x',
    splitterGroup: 'qs-ksplit-orders-x',
    transactionalId: 'qs-ktx-orders-x',
  });
  await roundTrip(engine, KAFKA, () =>
    assert.deepEqual(
      engine.status().routes.map((r) => [r.routeId, r.state]),
      [
        ['r-alice', 'active'],
        ['r-bob', 'removed'],
      ],
    ),
  );
});

test('a RabbitMQ checkpoint of the previous version is recovered and written back byte for byte', async () => {
  const engine = new RabbitEngine({
    activationId: 'inst/uid-2',
    epoch: 1,
    amqpUrl: 'amqp://127.0.0.1:1',
    managementUrl: 'http://127.0.0.1:1',
    sourceQueue: 'invoices',
    appShadow: 'qs-rapp-invoices-x',
    lockQueue: 'qs-rlock-invoices-x',
  });
  try {
    const recovered = await engine.recover(JSON.parse(RABBIT) as Checkpoint);
    assert.equal(recovered.kind, 'done', JSON.stringify(recovered));
    if (recovered.kind === 'done') assert.equal(JSON.stringify(recovered.checkpoint), RABBIT);
    assert.deepEqual(
      engine.status().retained.map((r) => r.name),
      ['qs-rses-kept'],
    );
  } finally {
    await engine.close();
  }
});
