// The SQS engine's configuration checks, shadow attributes and checkpoint format
// (agent/sqs/config.ts, shadowAttributes.ts, checkpoint.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Checkpoint } from '../../../agent/engine/contract';
import { queueNameOf, siblingUrl, validateConfig, type SqsEngineConfig } from '../../../agent/sqs/config';
import { SqsEngine } from '../../../agent/sqs/engine';
import { maxReceiveCount, shadowAttributes } from '../../../agent/sqs/shadowAttributes';

const config: SqsEngineConfig = {
  activationId: 'inst/uid-1',
  epoch: 1,
  region: 'us-east-1',
  sourceQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/orders',
  appShadow: 'qs-sapp-orders-x',
  lockQueue: 'qs-slock-orders-x',
};

test('queue names and sibling URLs come from the source URL', () => {
  assert.equal(queueNameOf(config.sourceQueueUrl), 'orders');
  assert.equal(queueNameOf('http://127.0.0.1:9324/000000000000/q-1/'), 'q-1');
  assert.equal(
    siblingUrl(config.sourceQueueUrl, 'qs-sapp-orders-x'),
    'https://sqs.us-east-1.amazonaws.com/123456789012/qs-sapp-orders-x',
  );
});

test('a valid configuration passes; each problem names its field', () => {
  assert.deepEqual(validateConfig(config), []);
  const paths = (c: Partial<SqsEngineConfig>) => validateConfig({ ...config, ...c }).map((e) => e.path);
  assert.deepEqual(paths({ sourceQueueUrl: 'not a url' }), ['sourceQueueUrl']);
  assert.deepEqual(paths({ sourceQueueUrl: 'https://sqs.us-east-1.amazonaws.com/orders' }), [
    'sourceQueueUrl',
  ]);
  assert.deepEqual(paths({ appShadow: 'has space' }), ['appShadow']);
  assert.deepEqual(paths({ lockQueue: 'x'.repeat(81) }), ['lockQueue']);
  assert.deepEqual(paths({ appShadow: 'orders' }), ['appShadow']);
  assert.deepEqual(paths({ prefetch: 0 }), ['prefetch']);
});

test('shadows are queues of the source’s kind; the lock queue is a standard one', () => {
  const fifo = { ...config, sourceQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo' };
  assert.deepEqual(validateConfig({ ...fifo, appShadow: 'qs-sapp-orders-x.fifo' }), []);
  const [error, ...more] = validateConfig(fifo);
  assert.equal(more.length, 0);
  assert.equal(error?.path, 'appShadow');
  assert.match(error?.problem ?? '', /FIFO/);
  assert.match(error?.fix ?? '', /\.fifo/);
  assert.deepEqual(
    validateConfig({ ...config, appShadow: 'qs-sapp-orders-x.fifo' }).map((e) => e.path),
    ['appShadow'],
  );
  assert.deepEqual(
    validateConfig({ ...fifo, appShadow: 'a.fifo', lockQueue: 'l.fifo' }).map((e) => e.path),
    ['lockQueue'],
  );
  assert.deepEqual(
    validateConfig({ ...fifo, appShadow: `${'x'.repeat(76)}.fifo` }).map((e) => e.path),
    ['appShadow'],
  );
});

test('FIFO shadows get the source’s FIFO and deduplication settings', () => {
  const { attributes } = shadowAttributes({
    FifoQueue: 'true',
    ContentBasedDeduplication: 'true',
    DeduplicationScope: 'messageGroup',
    FifoThroughputLimit: 'perMessageGroupId',
  });
  assert.deepEqual(attributes, {
    FifoQueue: 'true',
    ContentBasedDeduplication: 'true',
    DeduplicationScope: 'messageGroup',
    FifoThroughputLimit: 'perMessageGroupId',
  });
  assert.deepEqual(shadowAttributes({ FifoQueue: 'false' }).attributes, {});
});

test('shadows get the attributes that change behaviour, not the delay, and warnings say why', () => {
  const redrive = '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:dlq","maxReceiveCount":2}';
  const { attributes, warnings } = shadowAttributes({
    VisibilityTimeout: '45',
    MessageRetentionPeriod: '86400',
    ReceiveMessageWaitTimeSeconds: '20',
    DelaySeconds: '5',
    RedrivePolicy: redrive,
    KmsMasterKeyId: 'alias/aws/sqs',
    QueueArn: 'arn:aws:sqs:us-east-1:123456789012:orders',
    ApproximateNumberOfMessages: '3',
  });
  assert.deepEqual(attributes, {
    VisibilityTimeout: '45',
    MessageRetentionPeriod: '86400',
    ReceiveMessageWaitTimeSeconds: '20',
    RedrivePolicy: redrive,
    KmsMasterKeyId: 'alias/aws/sqs',
  });
  assert.equal(warnings.length, 2);
  assert.match(warnings[0]!, /delays messages 5 s/);
  assert.match(warnings[1]!, /maxReceiveCount is 2/);
  assert.equal(maxReceiveCount('not json'), undefined);
});

test('an SQS checkpoint is recovered and written back byte for byte, its ledger included', async () => {
  const text = JSON.stringify({
    provider: 'sqs',
    format: 1,
    state: {
      activationId: config.activationId,
      epoch: 1,
      sourceQueueUrl: config.sourceQueueUrl,
      appShadow: config.appShadow,
      lockQueue: config.lockQueue,
      phase: 'cleaned',
      shadowAttributes: { VisibilityTimeout: '45' },
      generation: 3,
      routes: [{ routeId: 'r-alice', filter: { 'x-user': 'alice' }, shadow: 'qs-sses-a' }],
      removed: [{ routeId: 'r-bob', shadow: 'qs-sses-b' }],
      retained: [],
      ledger: [
        {
          messageId: 'm-1',
          destination: 'qs-sses-a',
          routeId: 'r-alice',
          generation: 2,
          at: '2026-12-01T10:00:00.000Z',
        },
        { messageId: 'm-2', destination: config.appShadow, generation: 3, at: '2026-12-01T10:00:01.000Z' },
      ],
    },
  });
  const engine = new SqsEngine(config);
  try {
    const recovered = await engine.recover(JSON.parse(text) as Checkpoint);
    assert.equal(recovered.kind, 'done', JSON.stringify(recovered));
    if (recovered.kind === 'done') assert.equal(JSON.stringify(recovered.checkpoint), text);
    const other = await new SqsEngine({ ...config, lockQueue: 'another-lock' }).recover(
      JSON.parse(text) as Checkpoint,
    );
    assert.equal(other.kind, 'degraded');
  } finally {
    await engine.close();
  }
});
