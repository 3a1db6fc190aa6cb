// test-order: first (about 2 minutes of emptiness proofs)
// Shadows are deleted at cleanup when their emptiness is proven, quorum queues too
// (they have no conditional delete): no publisher (the fence and a stopped pump), no consumer
// by live AMQP, two fresh management samples some seconds apart, then the delete. Anything
// short of that keeps the shadow and says why.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import * as amqp from 'amqplib';
import type { Checkpoint, Engine, EngineHooks } from '../../agent/engine/contract';
import { RabbitEngine } from '../../agent/rabbitmq/engine';
import { ManagementClient, type ManagementQueue } from '../../agent/rabbitmq/management';
import { loadServices } from '../support/services';
import type { ProviderHarness, Topology } from './harness';
import { rabbitHarness } from './rabbitmq/harness';
import { batch, ids, seenIds } from './delivery';
import { done, expectPending, running, untilDone } from './steps';
import { testLogger, withSplit } from './support';
import { testTiming } from './timing';

const services = loadServices();

/** A split of `t` with no routes, run and handed back; the application shadow is left empty
 * and unused, ready for cleanup. Returns the handed-off checkpoint. */
async function handedBack(h: ProviderHarness, t: Topology, e: Engine): Promise<Checkpoint> {
  await running(e, 1, []);
  const input = batch('cleanup', 3);
  await h.produce(t, input);
  await h.read(t.appShadow, ids(input));
  const stopped = done(await e.stop(), 'stop');
  await untilDone(() => e.drainApplication(), 'drainApplication');
  const handed = await untilDone(() => e.commitHandoff(stopped.value.handoff), 'commitHandoff');
  return handed.checkpoint;
}

describe('RabbitMQ cleanup of a quorum split', { concurrency: 1 }, () => {
  const h = rabbitHarness('quorum');
  after(() => h.close());

  test('a drained quorum shadow is deleted', () =>
    withSplit(h, async (t, engines) => {
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      await handedBack(h, t, e);
      await untilDone(() => e.verifyCleanupReady(), 'verifyCleanupReady');
      const cleaned = (await untilDone(() => e.cleanup(), 'cleanup')).value;
      assert.deepEqual(cleaned.deleted, [t.appShadow]);
      assert.deepEqual(cleaned.retained, [], 'nothing left for the cleanup record');
      assert.equal(await h.exists(t.appShadow), false);
      assert.equal(await h.exists(t.source), true, 'the source is never touched');
    }));

  for (const left of ['ready', 'unacked'] as const) {
    test(`a quorum shadow with one message left (${left}) is kept and reported`, () =>
      withSplit(h, async (t, engines) => {
        const e = engines.track(h.engine(t, { logger: testLogger(), stepTimeoutMs: 4_000 }));
        await handedBack(h, t, e);
        const [stray] = batch(`stray-${left}`, 1);
        await h.inject(t.appShadow, [stray!]); // behind the engine's back, after the handoff
        const held = left === 'unacked' ? await h.holdOne(t.appShadow) : undefined;
        try {
          const outcome = await e.cleanup();
          expectPending(outcome, 'backlog', 'cleanup with a message left');
          if (outcome.kind === 'pending') {
            assert.match(outcome.blockingReason, new RegExp(`${t.appShadow}.*kept`));
            // A basic.get holding a quorum message counts as a consumer until it settles.
            assert.match(outcome.blockingReason, left === 'ready' ? /1 ready/ : /1 unacked|1 consumers/);
          }
          assert.equal(await h.exists(t.appShadow), true, 'kept');
        } finally {
          await held?.release();
        }
        const kept = await h.read(t.appShadow, [stray!.id]);
        assert.deepEqual(
          kept.map((m) => m.id),
          [stray!.id],
          'the message is still in the kept shadow',
        );
      }));
  }

  test('a restart between the checks and the delete resumes safely', () =>
    withSplit(h, async (t, engines) => {
      let crashed = 0;
      const hooks: EngineHooks = {
        beforeShadowDelete: () => {
          crashed++;
          throw new Error('the process died here'); // the step fails, nothing is deleted
        },
      };
      const first = engines.track(h.engine(t, { logger: testLogger(), hooks }));
      const checkpoint = await handedBack(h, t, first);
      const outcome = await first.cleanup();
      assert.equal(crashed, 1, 'every check passed and the delete was next');
      expectPending(outcome, 'broker-unavailable', 'cleanup that died before the delete');
      assert.equal(await h.exists(t.appShadow), true, 'not deleted before the restart');
      await first.close();

      const second = engines.track(h.engine(t, { logger: testLogger() }));
      assert.equal((await untilDone(() => second.recover(checkpoint), 'recover')).value.phase, 'handed-off');
      const cleaned = (await untilDone(() => second.cleanup(), 'cleanup after the restart')).value;
      assert.deepEqual(cleaned.deleted, [t.appShadow]);
      assert.equal(await h.exists(t.appShadow), false);
    }));
});

for (const type of ['classic', 'quorum'] as const) {
  describe(`RabbitMQ cleanup of a ${type} split with a late consumer`, { concurrency: 1 }, () => {
    const h = rabbitHarness(type);
    after(() => h.close());

    test(`a consumer that attaches between the checks keeps the ${type} shadow`, () =>
      withSplit(h, async (t, engines) => {
        let conn: amqp.ChannelModel | undefined;
        const hooks: EngineHooks = {
          beforeShadowDelete: async ({ shadow }) => {
            if (conn) return;
            conn = await amqp.connect(services.amqpUrl);
            conn.on('error', () => undefined);
            const ch = await conn.createChannel();
            ch.on('error', () => undefined);
            await ch.consume(shadow, () => undefined); // the app scaled up again, say
          },
        };
        try {
          const e = engines.track(h.engine(t, { logger: testLogger(), hooks, stepTimeoutMs: 4_000 }));
          await handedBack(h, t, e);
          const outcome = await e.cleanup();
          expectPending(outcome, 'backlog', 'cleanup with a consumer attached');
          if (outcome.kind === 'pending') assert.match(outcome.blockingReason, /kept: .*consumer/);
          assert.equal(await h.exists(t.appShadow), true, 'kept');
        } finally {
          await conn?.close().catch(() => undefined);
        }
      }));
  });
}

/**
 * Statistics whose message counts lag their consumer fields: the broker's management plugin
 * collects a queue's counts and its consumer details separately, so under load a record can
 * name a consumer that attached seconds ago beside counts from before that (docs/design.md
 * §5.4). From `freeze()` until `lagMs` later, `shadow`'s counts read as they did before: empty.
 */
class LaggingCounts extends ManagementClient {
  private frozenUntil = 0;
  constructor(
    private readonly shadow: string,
    private readonly lagMs: number,
  ) {
    super(services.rabbitManagementUrl, services.amqpUrl, '/', 5_000);
  }
  freeze(): void {
    this.frozenUntil = Date.now() + this.lagMs;
  }
  override async getQueue(name: string): Promise<ManagementQueue | undefined> {
    const q = await super.getQueue(name);
    if (!q || name !== this.shadow || Date.now() >= this.frozenUntil) return q;
    return { ...q, messages_ready: 0, messages_unacknowledged: 0 };
  }
}

describe('RabbitMQ cleanup when the statistics counts lag', { concurrency: 1 }, () => {
  const h = rabbitHarness('classic');
  after(() => h.close());

  test('a classic shadow whose statistics show the delete-proof consumer before counts that catch up is kept: a held message is never deleted', () =>
    withSplit(h, async (t, engines) => {
      // Within the engine's bound on statistics lag, as the design assumes (statisticsLagMs).
      const timing = { ...testTiming, statisticsLagMs: 9_000, stepTimeoutMs: 40_000 };
      const lagging = new LaggingCounts(t.appShadow, timing.statisticsLagMs - 1_000);
      const rt = t as typeof t & { lockQueue: string; activationId: string };
      const e = engines.track(
        new RabbitEngine(
          {
            activationId: rt.activationId,
            epoch: 1,
            amqpUrl: services.amqpUrl,
            managementUrl: services.rabbitManagementUrl,
            sourceQueue: t.source,
            appShadow: t.appShadow,
            lockQueue: rt.lockQueue,
            timing,
            connectionLabel: `${t.label}-lagging`,
          },
          { logger: testLogger(), management: lagging },
        ),
      );
      await handedBack(h, t, e);
      // Someone publishes into the shadow after the handoff and fetches one message without
      // acknowledging it (basic.get): nothing is ready and nobody consumes, so only the
      // unacknowledged count can tell — and the statistics say "empty" for a while.
      const stray = batch('stray-held', 2);
      lagging.freeze();
      await h.inject(t.appShadow, stray);
      const held = await h.holdOne(t.appShadow);
      const other = stray.find((m) => m.id !== held.id)!;
      assert.deepEqual(seenIds(await h.read(t.appShadow, [other.id])), [other.id]);
      try {
        const outcome = await e.cleanup();
        expectPending(outcome, 'backlog', 'cleanup with a held message and lagging counts');
        assert.equal(await h.exists(t.appShadow), true, 'kept');
      } finally {
        await held.release();
      }
      assert.deepEqual(
        seenIds(await h.read(t.appShadow, [held.id])),
        [held.id],
        'the held message is still there',
      );
    }));
});

/**
 * The statistics of a consumer that just left: until a record names the engine's delete-proof
 * consumer, `shadow` reads as still consumed by the one before (a session's consumer, the app),
 * as the broker's statistics do for up to their lag after it left.
 */
class DepartedConsumerShown extends ManagementClient {
  constructor(private readonly shadow: string) {
    super(services.rabbitManagementUrl, services.amqpUrl, '/', 5_000);
  }
  override async getQueue(name: string): Promise<ManagementQueue | undefined> {
    const q = await super.getQueue(name);
    if (!q || name !== this.shadow || q.exclusive_consumer_tag?.startsWith('queue-split-delete-proof-'))
      return q;
    return {
      ...q,
      consumers: Math.max(q.consumers ?? 0, 1),
      exclusive_consumer_tag: 'the-session-that-left',
    };
  }
}

describe('RabbitMQ cleanup right after a consumer left', { concurrency: 1 }, () => {
  const h = rabbitHarness('classic');
  after(() => h.close());

  test('a classic shadow is deleted without waiting for the statistics to show the consumer that left gone: the exclusive consume proves nobody consumes', () =>
    withSplit(h, async (t, engines) => {
      const management = new DepartedConsumerShown(t.appShadow);
      const rt = t as typeof t & { lockQueue: string; activationId: string };
      const e = engines.track(
        new RabbitEngine(
          {
            activationId: rt.activationId,
            epoch: 1,
            amqpUrl: services.amqpUrl,
            managementUrl: services.rabbitManagementUrl,
            sourceQueue: t.source,
            appShadow: t.appShadow,
            lockQueue: rt.lockQueue,
            timing: testTiming,
            connectionLabel: `${t.label}-departed`,
          },
          { logger: testLogger(), management },
        ),
      );
      await handedBack(h, t, e);
      const cleaned = done(await e.cleanup(), 'cleanup while the statistics still show the last consumer');
      assert.deepEqual(cleaned.value.deleted, [t.appShadow]);
      assert.equal(await h.exists(t.appShadow), false);
    }));
});
