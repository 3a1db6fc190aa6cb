// SQS-only behaviour of the engine (docs/providers/sqs.md) that the provider-neutral suite
// cannot phrase: FIFO order per message group across a crash, shadows of the wrong kind refused,
// the filter reading an SNS envelope, a poison
// message reaching the dead-letter queue after as many of the application's receives as
// without a split, and a copy slower than the pump's visibility timeout copied once.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import type { Engine } from '../../agent/engine/contract';
import type { SqsEngineConfig } from '../../agent/sqs/config';
import { SqsEngine } from '../../agent/sqs/engine';
import { uniqueName } from '../support/services';
import { sleep } from '../support/poll';
import { ID_ATTRIBUTE, sqsHarness, sqsQueueUrl, sqsTestTiming } from './sqs/harness';
import { assertDelivery, batch, ids, seenIds, USER } from './delivery';
import { running, untilDone } from './steps';
import { crashChildAt } from './scenarios/crash';
import { testLogger, waitFor, withSplit } from './support';

const h = sqsHarness();
const fifo = sqsHarness({ fifo: true });
after(() => Promise.all([h.close(), fifo.close()]));

const engineWith = (config: SqsEngineConfig, hooks = {}): Engine =>
  new SqsEngine(config, { logger: testLogger(), hooks });

/** The body SNS delivers to a subscribed queue without raw delivery. */
const snsNotification = (id: string, user: string) =>
  JSON.stringify({
    Type: 'Notification',
    MessageId: id,
    TopicArn: 'arn:aws:sns:us-east-1:000000000000:orders',
    Message: `{"order":"${id}"}`,
    Timestamp: '2026-12-01T10:00:00.000Z',
    SignatureVersion: '1',
    MessageAttributes: { [USER]: { Type: 'String', Value: user } },
  });

const sendRaw = (queue: string, id: string, body: string, extra: Record<string, string> = {}) =>
  h.client.send(
    new SendMessageCommand({
      QueueUrl: sqsQueueUrl(queue),
      MessageBody: body,
      MessageAttributes: Object.fromEntries(
        Object.entries({ [ID_ATTRIBUTE]: id, ...extra }).map(([k, v]) => [
          k,
          { DataType: 'String', StringValue: v },
        ]),
      ),
    }),
  );

describe('SQS-specific engine behaviour', { concurrency: 2 }, () => {
  test('FIFO: each message group keeps its order into every destination across a crash between copy and delete', () =>
    withSplit(fifo, async (t, engines) => {
      const alice = t.route('alice', { [USER]: 'alice' });
      // Three groups, interleaved; in each, messages alternate between alice and the app.
      const groups = ['g1', 'g2', 'g3'];
      const input = batch('order', 18, (i) => ({
        [USER]: Math.floor(i / 3) % 2 === 0 ? 'alice' : 'bob',
      })).map((m, i) => ({ ...m, extra: { MessageGroupId: groups[i % 3]! } }));
      const groupOf = new Map(input.map((m) => [m.id, m.extra.MessageGroupId]));
      const victim = input[6]!; // g1's third message, to alice
      await fifo.produce(t, input);
      const checkpoint = await crashChildAt(fifo.childSpec(t, 1, [alice], { prefetch: 1 }), victim.id);
      const e = engines.track(fifo.engine(t, { logger: testLogger() }));
      await untilDone(() => e.recover(checkpoint), 'recover');
      const toAlice = input.filter((m) => m.headers?.[USER] === 'alice');
      const toApp = input.filter((m) => m.headers?.[USER] !== 'alice');
      const seen = {
        [alice.shadow]: seenIds(await fifo.read(alice.shadow, ids(toAlice))),
        app: seenIds(await fifo.read(t.appShadow, ids(toApp))),
      };
      assertDelivery({ inputs: ids(input), destinations: seen, mayDuplicate: [victim.id] });
      for (const [dest, sent] of [
        [alice.shadow, toAlice],
        ['app', toApp],
      ] as const) {
        for (const g of groups) {
          // A duplicate may only repeat the message before it (the retried copy comes first in its group).
          const got = seen[dest]!.filter((id) => groupOf.get(id) === g).filter(
            (id, i, all) => id !== all[i - 1],
          );
          const want = ids(sent.filter((m) => m.extra.MessageGroupId === g));
          assert.deepEqual(got, want, `${g} in ${dest}: order kept`);
        }
      }
    }));

  test('shadows of the wrong kind are refused: a FIFO source needs .fifo shadows, a standard one plain ones', () =>
    withSplit(fifo, async (t, engines) => {
      const e = engines.track(fifo.engine(t, { logger: testLogger() }));
      await running(e, 1, []);
      const plain = { routeId: 'plain', filter: { [USER]: 'alice' }, shadow: `${t.label}-plain` };
      const refused = await e.reconcileRoutes(2, [plain]);
      assert.equal(refused.kind, 'rejected', JSON.stringify(refused));
      if (refused.kind === 'rejected') {
        assert.equal(refused.errors[0]?.path, 'routes[0].shadow');
        assert.match(refused.errors[0]?.fix ?? '', /\.fifo/);
      }
      assert.equal(await fifo.exists(plain.shadow), false);
    }));

  test('the filter reads the attributes of an SNS envelope (snsEnvelope auto), and only the message’s own with off', () =>
    withSplit(h, async (t, engines) => {
      const alice = t.route('alice', { [USER]: 'alice' });
      const e = engines.track(engineWith(h.config(t)));
      await running(e, 1, [alice]);
      const viaSns = batch('sns-alice', 3);
      const viaSnsBob = batch('sns-bob', 2);
      for (const m of viaSns) await sendRaw(t.source, m.id, snsNotification(m.id, 'alice'));
      for (const m of viaSnsBob) await sendRaw(t.source, m.id, snsNotification(m.id, 'bob'));
      const seen = {
        [alice.shadow]: seenIds(await h.read(alice.shadow, ids(viaSns))),
        app: seenIds(await h.read(t.appShadow, ids(viaSnsBob))),
      };
      assertDelivery({ inputs: ids([...viaSns, ...viaSnsBob]), destinations: seen });
      assert.deepEqual(seen[alice.shadow]!.sort(), ids(viaSns).sort());
    }));

  test('with snsEnvelope off an envelope is only a body: its attributes route nothing', () =>
    withSplit(h, async (t, engines) => {
      const alice = t.route('alice', { [USER]: 'alice' });
      const e = engines.track(engineWith({ ...h.config(t), snsEnvelope: 'off' }));
      await running(e, 1, [alice]);
      const viaSns = batch('sns-off', 3);
      for (const m of viaSns) await sendRaw(t.source, m.id, snsNotification(m.id, 'alice'));
      const app = seenIds(await h.read(t.appShadow, ids(viaSns)));
      assertDelivery({ inputs: ids(viaSns), destinations: { app } });
    }));

  test('a poison message reaches the source’s dead-letter queue after maxReceiveCount receives by the application, as without a split', () =>
    withSplit(h, async (t, engines) => {
      const dlq = uniqueName('cf-sqs-dlq');
      const { QueueUrl: dlqUrl } = await h.client.send(new CreateQueueCommand({ QueueName: dlq }));
      try {
        const { Attributes } = await h.client.send(
          new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }),
        );
        const redrive = JSON.stringify({ deadLetterTargetArn: Attributes!.QueueArn, maxReceiveCount: 2 });
        await h.client.send(
          new SetQueueAttributesCommand({
            QueueUrl: sqsQueueUrl(t.source),
            Attributes: { RedrivePolicy: redrive },
          }),
        );
        const e = engines.track(engineWith(h.config(t)));
        await running(e, 1, []);
        const shadowRedrive = await h.client.send(
          new GetQueueAttributesCommand({
            QueueUrl: sqsQueueUrl(t.appShadow),
            AttributeNames: ['RedrivePolicy'],
          }),
        );
        assert.deepEqual(JSON.parse(shadowRedrive.Attributes!.RedrivePolicy!), JSON.parse(redrive));

        const [poison] = batch('poison', 1);
        await h.produce(t, [poison!]);
        // The application fails on it every time: receive, then give it back at once.
        let deliveries = 0;
        await waitFor(
          'the poison message is in the dead-letter queue',
          async () => {
            const { Messages = [] } = await h.client.send(
              new ReceiveMessageCommand({
                QueueUrl: sqsQueueUrl(t.appShadow),
                WaitTimeSeconds: 1,
                MaxNumberOfMessages: 1,
              }),
            );
            for (const m of Messages) {
              deliveries++;
              await h.client.send(
                new ChangeMessageVisibilityCommand({
                  QueueUrl: sqsQueueUrl(t.appShadow),
                  ReceiptHandle: m.ReceiptHandle,
                  VisibilityTimeout: 0,
                }),
              );
            }
            return h.backlog(dlq);
          },
          (n) => n === 1,
          30_000,
        );
        assert.equal(deliveries, 2, 'the application received it maxReceiveCount times');
        assert.deepEqual(seenIds(await h.read(dlq, [poison!.id])), [poison!.id]);
        assert.equal(await h.backlog(t.source), 0);
        assert.equal(await h.backlog(t.appShadow), 0);
      } finally {
        await h.client.send(new DeleteQueueCommand({ QueueUrl: dlqUrl })).catch(() => undefined);
      }
    }));

  test('a copy slower than the pump’s visibility timeout keeps its source message in flight: received and copied once', () =>
    withSplit(h, async (t, engines) => {
      // maxReceiveCount 1: a second receive of the slow message would move it to the dead-letter
      // queue, so an empty one proves the pump never let it become visible again.
      const dlq = uniqueName('cf-sqs-dlq');
      const { QueueUrl: dlqUrl } = await h.client.send(new CreateQueueCommand({ QueueName: dlq }));
      try {
        const { Attributes } = await h.client.send(
          new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }),
        );
        const redrive = JSON.stringify({ deadLetterTargetArn: Attributes!.QueueArn, maxReceiveCount: 1 });
        await h.client.send(
          new SetQueueAttributesCommand({
            QueueUrl: sqsQueueUrl(t.source),
            Attributes: { RedrivePolicy: redrive },
          }),
        );
        const input = batch('slow', 4);
        const slow = input[1]!;
        const slowMs = 3 * (sqsTestTiming.pumpVisibilitySeconds ?? 3) * 1000;
        let held = 0;
        const e = engines.track(
          engineWith(h.config(t), {
            afterShadowConfirm: async ({ messageId }: { messageId: string | undefined }) => {
              if (messageId !== slow.id) return;
              held++;
              await sleep(slowMs);
            },
          }),
        );
        await running(e, 1, []);
        await h.produce(t, input);
        await waitFor(
          'the slow copy is held',
          async () => held,
          (n) => n === 1,
        );
        const app = seenIds(await h.read(t.appShadow, ids(input), 30_000));
        await waitFor(
          'source drained',
          () => h.backlog(t.source),
          (n) => n === 0,
          30_000,
        );
        assertDelivery({ inputs: ids(input), destinations: { app } });
        assert.equal(held, 1);
        assert.equal(await h.backlog(dlq), 0, 'never received a second time');
        assert.equal(e.status().app.published, input.length);
      } finally {
        await h.client.send(new DeleteQueueCommand({ QueueUrl: dlqUrl })).catch(() => undefined);
      }
    }));
});
