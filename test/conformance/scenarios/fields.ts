// Field preservation: what the application or the developer consumes from a shadow is the
// message the producer sent (docs/design.md §5): body, headers/properties, content type, timestamp,
// message id. What a provider cannot carry is listed by its harness and printed here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Observed, ProviderHarness, TestMessage } from '../harness';
import { assertDelivery, batch, ids, seenIds, USER } from '../delivery';
import { running } from '../steps';
import { testLogger, withSplit } from '../support';

export function fieldScenarios(h: ProviderHarness): void {
  test('body, headers, properties, content type, timestamp and id are preserved', async (t) => {
    t.diagnostic(`${h.name} cannot preserve: ${h.notPreserved.join('; ')}`);
    await withSplit(h, async (topo, engines) => {
      const e = engines.track(h.engine(topo, { logger: testLogger() }));
      const alice = topo.route('alice', { [USER]: 'alice' });
      await running(e, 1, [alice]);
      const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const timestamp = Math.floor(Date.now() / 1000) * 1000 - 60_000;
      const shape = (m: TestMessage, i: number): TestMessage => ({
        ...m,
        body: i === 0 ? Buffer.alloc(0) : Buffer.concat([binary, Buffer.from(m.id)]),
        contentType: 'application/octet-stream',
        timestamp,
        extra: h.richProperties,
      });
      const toAlice = batch('rich-alice', 3, () => ({ [USER]: 'alice', 'x-trace': 'abc' })).map(shape);
      const toApp = batch('rich-app', 3, () => ({ [USER]: 'bob', 'x-trace': 'def' })).map(shape);
      await h.produce(topo, [...toAlice, ...toApp]);
      const session = await h.read(alice.shadow, ids(toAlice));
      const app = await h.read(topo.appShadow, ids(toApp));
      assertDelivery({
        inputs: ids([...toAlice, ...toApp]),
        destinations: { [alice.shadow]: seenIds(session), app: seenIds(app) },
      });
      const sent = new Map([...toAlice, ...toApp].map((m) => [m.id, m]));
      for (const got of [...session, ...app]) assertPreserved(h, sent.get(got.id)!, got);
    });
  });
}

function assertPreserved(h: ProviderHarness, sent: TestMessage, got: Observed): void {
  const where = `message ${sent.id}`;
  assert.ok(got.body.equals(sent.body!), `${where}: body`);
  assert.equal(got.contentType, sent.contentType, `${where}: content type`);
  assert.equal(got.timestamp, sent.timestamp, `${where}: timestamp`);
  for (const [key, value] of Object.entries(sent.headers ?? {})) {
    assert.deepEqual(got.headers[key], value, `${where}: header ${key}`);
  }
  const { headers: typed, ...properties } = h.richProperties as { headers?: Record<string, unknown> };
  for (const [key, value] of Object.entries(typed ?? {})) {
    assert.deepEqual(got.headers[key], value, `${where}: typed header ${key}`);
  }
  for (const [key, value] of Object.entries(properties)) {
    assert.deepEqual(got.extra[key], value, `${where}: property ${key}`);
  }
}
