// Amazon SQS's core module (core/providers/sqs, docs/providers/sqs.md): the `sqs:` block — bad
// input gets an error naming the field, the problem and the fix —, its resolution against the
// pod template, the ownership key (the queue URL's account, region and name), the plan through
// the desired document, and the env override that points the workload at a shadow by URL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { desiredState } from '../../../agent/controller/desired';
import { overridesFor } from '../../../agent/controller/workloads';
import { parseDesired } from '../../../core/agentDocuments';
import type { ResolvedSqsQueue } from '../../../core/providers/sqs/resolve';
import { parseQueueUrl } from '../../../core/providers/sqs/queueUrl';
import { sqsOwnershipKey } from '../../../core/providers/sqs/ownership';
import { consumerOverrides } from '../../../core/queueConfig/consumerOverrides';
import { validateQueueConfig } from '../../../core/queueConfig/parseQueueConfig';
import type { EnvVar, WorkloadLike } from '../../../core/queueConfig/podTemplate';
import { resolveWorkload } from '../../../core/queueConfig/resolveWorkload';
import { formatFieldError, type FieldError } from '../../../core/result';
import { sourceOwnershipKey } from '../../../core/sourceOwnership';
import { at } from './splitFixtures';

const AWS_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders';
const LOCAL_URL = 'http://elasticmq.infra:9324/000000000000/orders';

const config = (block: Record<string, unknown>) => ({ queues: [{ name: 'orders', sqs: block }] });

function errorAt(errors: readonly FieldError[], path: string, problem: RegExp): FieldError {
  const found = errors.find((e) => e.path === path && problem.test(e.problem));
  assert.ok(
    found,
    `no error at ${path} matching ${problem}; got:\n${errors.map(formatFieldError).join('\n')}`,
  );
  assert.ok(found.fix.length > 0, 'every error says how to fix it');
  return found;
}

function declarationErrors(block: Record<string, unknown>): FieldError[] {
  const result = validateQueueConfig(config(block));
  assert.equal(result.ok, false, 'expected errors');
  return result.ok ? [] : result.errors;
}

describe('the sqs block', () => {
  test('a queue URL env alone is a declaration (default credentials, SNS envelopes read)', () => {
    const result = validateQueueConfig(config({ queueUrlEnv: 'ORDERS_QUEUE_URL' }));
    assert.ok(result.ok, JSON.stringify(result));
  });

  test('every field together', () => {
    const result = validateQueueConfig(
      config({
        queueUrlEnv: 'ORDERS_QUEUE_URL',
        regionEnv: 'AWS_REGION',
        endpointEnv: 'AWS_ENDPOINT_URL_SQS',
        credentials: 'static',
        accessKeyIdEnv: 'AWS_ACCESS_KEY_ID',
        secretAccessKeyEnv: 'AWS_SECRET_ACCESS_KEY',
        sessionTokenEnv: 'AWS_SESSION_TOKEN',
        snsEnvelope: 'off',
      }),
    );
    assert.ok(result.ok, JSON.stringify(result));
  });

  test('static credentials need both keys: the missing one is named', () => {
    const errors = declarationErrors({
      queueUrlEnv: 'Q',
      credentials: 'static',
      accessKeyIdEnv: 'AWS_ACCESS_KEY_ID',
    });
    const e = errorAt(errors, 'queues[0].sqs.secretAccessKeyEnv', /required with credentials: static/);
    assert.match(e.fix, /credentials: default/);
  });

  test('keys without credentials: static would be ignored, so they are refused', () => {
    const errors = declarationErrors({ queueUrlEnv: 'Q', accessKeyIdEnv: 'AWS_ACCESS_KEY_ID' });
    const e = errorAt(errors, 'queues[0].sqs.accessKeyIdEnv', /credentials is "default"/);
    assert.match(e.fix, /credentials: static/);
  });

  test('unknown values and fields are refused where they are', () => {
    errorAt(declarationErrors({ queueUrlEnv: 'Q', snsEnvelope: 'on' }), 'queues[0].sqs.snsEnvelope', /./);
    errorAt(declarationErrors({ queueUrlEnv: 'Q', credentials: 'irsa' }), 'queues[0].sqs.credentials', /./);
    assert.ok(
      declarationErrors({ queueUrlEnv: 'Q', queueUrl: AWS_URL }).length > 0,
      'a literal URL is no field',
    );
    errorAt(declarationErrors({ queueUrlEnv: '1BAD' }), 'queues[0].sqs.queueUrlEnv', /./);
    assert.ok(declarationErrors({}).some((e) => e.path === 'queues[0].sqs.queueUrlEnv'));
  });
});

function workload(block: string, env: EnvVar[]): WorkloadLike {
  return {
    kind: 'Deployment',
    metadata: {
      name: 'shop',
      namespace: 'team-a',
      uid: 'uid-1',
      annotations: {
        'telepresence.io/queue-config': `queues:\n  - name: orders\n    container: app\n    sqs: ${block}\n`,
      },
    },
    spec: { template: { spec: { containers: [{ name: 'app', env }] } } },
  };
}

const secretRef = (name: string, key: string): EnvVar['valueFrom'] => ({ secretKeyRef: { name, key } });

function resolved(block: string, env: EnvVar[]): ResolvedSqsQueue {
  const result = resolveWorkload(workload(block, env));
  assert.ok(result.ok, result.ok ? '' : result.errors.map(formatFieldError).join('\n'));
  const queue = result.value.queues[0];
  assert.ok(queue?.provider === 'sqs');
  return queue;
}

function resolveErrors(block: string, env: EnvVar[]): FieldError[] {
  const result = resolveWorkload(workload(block, env));
  assert.equal(result.ok, false, 'expected errors');
  return result.ok ? [] : result.errors;
}

describe('resolving an sqs queue', () => {
  test('an AWS queue URL names its region; static keys stay secretKeyRefs', () => {
    const q = resolved(
      '{queueUrlEnv: QUEUE_URL, credentials: static, accessKeyIdEnv: KEY_ID, secretAccessKeyEnv: SECRET}',
      [
        { name: 'QUEUE_URL', value: AWS_URL },
        { name: 'KEY_ID', valueFrom: secretRef('aws', 'id') },
        { name: 'SECRET', valueFrom: secretRef('aws', 'secret') },
      ],
    );
    assert.equal(q.source, AWS_URL);
    assert.deepEqual(q.sourceAt, { kind: 'env', name: 'QUEUE_URL' });
    assert.deepEqual(
      q.env.map((e) => [e.name, e.role, e.source.kind]),
      [
        ['QUEUE_URL', 'queueUrl', 'value'],
        ['KEY_ID', 'accessKeyId', 'secretKeyRef'],
        ['SECRET', 'secretAccessKey', 'secretKeyRef'],
      ],
    );
    assert.equal(q.snsEnvelope, undefined);
  });

  test('an endpoint override (ElasticMQ, LocalStack) with its region env', () => {
    const q = resolved(
      '{queueUrlEnv: QUEUE_URL, regionEnv: AWS_REGION, endpointEnv: SQS_ENDPOINT, snsEnvelope: off}',
      [
        { name: 'QUEUE_URL', value: LOCAL_URL },
        { name: 'AWS_REGION', value: 'us-east-1' },
        { name: 'SQS_ENDPOINT', value: 'http://elasticmq.infra:9324' },
      ],
    );
    assert.deepEqual(
      q.env.map((e) => e.role),
      ['queueUrl', 'region', 'endpoint'],
    );
    assert.equal(q.snsEnvelope, 'off');
  });

  test('a queue URL of another host needs endpointEnv and regionEnv: each is named with its fix', () => {
    const errors = resolveErrors('{queueUrlEnv: QUEUE_URL}', [{ name: 'QUEUE_URL', value: LOCAL_URL }]);
    const endpoint = errorAt(errors, 'queues[0].sqs.endpointEnv', /not an AWS SQS endpoint/);
    assert.match(endpoint.fix, /AWS_ENDPOINT_URL_SQS/);
    errorAt(errors, 'queues[0].sqs.regionEnv', /names no region/);
  });

  test('the queue URL must be a literal queue URL; the error names the env var', () => {
    const notLiteral = resolveErrors('{queueUrlEnv: QUEUE_URL}', [
      { name: 'QUEUE_URL', valueFrom: secretRef('aws', 'url') },
    ]);
    errorAt(notLiteral, 'queues[0].sqs.queueUrlEnv', /not a literal value/);
    const noQueue = resolveErrors('{queueUrlEnv: QUEUE_URL}', [
      { name: 'QUEUE_URL', value: 'https://sqs.us-east-1.amazonaws.com/orders' },
    ]);
    errorAt(noQueue, 'queues[0].sqs.queueUrlEnv', /QUEUE_URL .*\/<account>\/<queue name>/);
    const badName = resolveErrors('{queueUrlEnv: QUEUE_URL}', [
      { name: 'QUEUE_URL', value: 'https://sqs.us-east-1.amazonaws.com/1/or:ders' },
    ]);
    errorAt(badName, 'queues[0].sqs.queueUrlEnv', /not an SQS queue name/);
    const missing = resolveErrors('{queueUrlEnv: QUEUE_URL}', []);
    errorAt(missing, 'queues[0].sqs.queueUrlEnv', /is not set/);
  });

  test('a literal endpoint must be an http(s) URL', () => {
    const errors = resolveErrors('{queueUrlEnv: QUEUE_URL, regionEnv: R, endpointEnv: E}', [
      { name: 'QUEUE_URL', value: LOCAL_URL },
      { name: 'R', value: 'us-east-1' },
      { name: 'E', value: 'elasticmq:9324' },
    ]);
    errorAt(errors, 'queues[0].sqs.endpointEnv', /not an http/);
  });
});

describe('queue URLs and the ownership key', () => {
  test('AWS hosts name their region; other hosts none', () => {
    const region = (url: string) => {
      const parsed = parseQueueUrl(url, 'u');
      assert.ok(parsed.ok);
      return parsed.value.region;
    };
    assert.equal(region(AWS_URL), 'eu-west-1');
    assert.equal(region('https://eu-west-1.queue.amazonaws.com/1/q'), 'eu-west-1');
    assert.equal(region('https://queue.amazonaws.com/1/q'), 'us-east-1');
    assert.equal(region('https://vpce-0a1b.sqs.eu-west-1.vpce.amazonaws.com/1/q'), 'eu-west-1');
    assert.equal(region('https://sqs.cn-north-1.amazonaws.com.cn/1/q'), 'cn-north-1');
    assert.equal(region(LOCAL_URL), undefined);
    const fifo = parseQueueUrl('https://sqs.us-east-1.amazonaws.com/1/orders.fifo', 'u');
    assert.ok(fifo.ok && fifo.value.fifo);
  });

  test('one key per account, region and name, whichever AWS host form names it', () => {
    const key = (url: string) => {
      const k = sqsOwnershipKey(url);
      assert.ok(k.ok, url);
      return k.value;
    };
    assert.equal(key(AWS_URL), key('https://eu-west-1.queue.amazonaws.com/123456789012/orders'));
    assert.equal(key(AWS_URL), key('HTTPS://SQS.EU-WEST-1.AMAZONAWS.COM:443/123456789012/orders'));
    assert.notEqual(key(AWS_URL), key('https://sqs.eu-west-2.amazonaws.com/123456789012/orders'));
    assert.notEqual(key(AWS_URL), key('https://sqs.eu-west-1.amazonaws.com/210987654321/orders'));
    assert.notEqual(key(AWS_URL), key('https://sqs.eu-west-1.amazonaws.com/123456789012/orders2'));
    assert.equal(key(LOCAL_URL), key('https://elasticmq.infra:9999/000000000000/orders'));
    assert.ok(!sqsOwnershipKey('not a url').ok);
  });

  test("a resolved queue's key is its literal queue URL's", () => {
    const q = resolved('{queueUrlEnv: QUEUE_URL}', [{ name: 'QUEUE_URL', value: AWS_URL }]);
    const key = sqsOwnershipKey(AWS_URL);
    assert.ok(key.ok);
    assert.equal(sourceOwnershipKey('team-a', q), key.value);
  });
});

const queueOf = (source: string, extra: Partial<ResolvedSqsQueue> = {}): ResolvedSqsQueue => ({
  provider: 'sqs',
  name: 'orders',
  container: 'app',
  sourceAt: { kind: 'env', name: 'QUEUE_URL' },
  source,
  env: [
    { name: 'QUEUE_URL', role: 'queueUrl', source: { kind: 'value', value: source } },
    { name: 'AWS_REGION', role: 'region', source: { kind: 'value', value: 'us-east-1' } },
    { name: 'SQS_ENDPOINT', role: 'endpoint', source: { kind: 'value', value: 'http://elasticmq:9324' } },
  ],
  ...extra,
});

describe('the sqs plan', () => {
  const planOf = (queue: ResolvedSqsQueue) => {
    // The fixture's split declares `orders` as a Kafka queue; here it is the SQS one.
    const state = at('ACTIVE');
    const declared = state.queues.orders;
    assert.ok(declared);
    state.queues.orders = { ...declared, provider: 'sqs' };
    const parsed = parseDesired(JSON.stringify(desiredState(state, [queue], true)));
    assert.ok(parsed.ok, JSON.stringify(parsed));
    const plan = parsed.value.queues[0];
    assert.ok(plan?.provider === 'sqs');
    return plan;
  };

  test('carries the queue URL, the env by role, the scheme names and snsEnvelope off', () => {
    const plan = planOf(queueOf(LOCAL_URL, { snsEnvelope: 'off' }));
    assert.equal(plan.source, LOCAL_URL);
    assert.deepEqual(plan.env, { queueUrl: 'QUEUE_URL', region: 'AWS_REGION', endpoint: 'SQS_ENDPOINT' });
    assert.equal(plan.snsEnvelope, 'off');
    assert.match(plan.names.appShadow, /^qs-sapp-orders-[a-z0-9]+$/);
    assert.match(plan.names.lockQueue ?? '', /^qs-slock-orders-[a-z0-9]+$/);
    assert.ok(plan.names.appShadow.length <= 75, 'room for .fifo within SQS 80 characters');
    assert.equal(planOf(queueOf(LOCAL_URL)).snsEnvelope, undefined);
  });

  test('the workload is pointed at a shadow by its URL; a FIFO source at a .fifo one', () => {
    const standard = queueOf(LOCAL_URL);
    assert.deepEqual(
      overridesFor([standard], () => ({ appShadow: 'qs-sapp-orders-x' })),
      [
        {
          container: 'app',
          at: { kind: 'env', name: 'QUEUE_URL' },
          value: 'http://elasticmq.infra:9324/000000000000/qs-sapp-orders-x',
        },
      ],
    );
    const fifo = queueOf('https://sqs.us-east-1.amazonaws.com/1/orders.fifo');
    assert.deepEqual(consumerOverrides(fifo, { source: 'qs-sses-orders-y' }), [
      {
        at: { kind: 'env', name: 'QUEUE_URL' },
        value: 'https://sqs.us-east-1.amazonaws.com/1/qs-sses-orders-y.fifo',
      },
    ]);
  });
});
