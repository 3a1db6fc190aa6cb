// The laptop's SQS connection (laptop/sqs.ts) from a queue's resolved env: region from the env or
// the queue URL, the endpoint dialed through the address map, static keys registered as secrets,
// and an incomplete key pair named by its env var.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { ResolvedSqsQueue } from '../../../core/providers/sqs/resolve';
import { AddressMap } from '../../../laptop/addressMap';
import { resolveConnections } from '../../../laptop/brokerConnection';
import { SidecarError } from '../../../laptop/errors';
import { Redactor } from '../../../laptop/redact';

const queue = (source: string, env: ResolvedSqsQueue['env']): ResolvedSqsQueue => ({
  provider: 'sqs',
  name: 'orders',
  container: 'app',
  sourceAt: { kind: 'env', name: 'QUEUE_URL' },
  source,
  env: [{ name: 'QUEUE_URL', role: 'queueUrl', source: { kind: 'value', value: source } }, ...env],
});

const literal = (name: string, role: ResolvedSqsQueue['env'][number]['role'], value: string) => ({
  name,
  role,
  source: { kind: 'value' as const, value },
});

async function connect(
  q: ResolvedSqsQueue,
  overrides: Record<string, string> = {},
  map: Record<string, string> = {},
) {
  const redactor = new Redactor();
  const [c] = await resolveConnections([q], {
    // Every value here is a literal or an override: nothing is read from the cluster.
    kube: { kc: new KubeConfig(), context: 'none', namespace: 'team-a' },
    overrides: new Map(Object.entries(overrides)),
    addressMap: AddressMap.parse(map, 'addressMap'),
    redactor,
  });
  assert.ok(c?.broker.provider === 'sqs');
  return { broker: c.broker, redactor };
}

test('an AWS queue URL gives the region; no keys means the default chain here', async () => {
  const { broker } = await connect(queue('https://sqs.eu-west-1.amazonaws.com/1/orders', []));
  assert.equal(broker.region, 'eu-west-1');
  assert.equal(broker.endpoint, undefined);
  assert.equal(broker.credentials, undefined);
  assert.equal(broker.sourceUrl, 'https://sqs.eu-west-1.amazonaws.com/1/orders');
});

test('an endpoint override is dialed through the address map; keys are secrets', async () => {
  const q = queue('http://elasticmq.infra:9324/000000000000/orders', [
    literal('AWS_REGION', 'region', 'us-east-1'),
    literal('SQS_ENDPOINT', 'endpoint', 'http://elasticmq.infra:9324'),
    literal('KEY_ID', 'accessKeyId', 'AKIATESTKEY'),
    literal('SECRET', 'secretAccessKey', 'very-secret-value'),
  ]);
  const { broker, redactor } = await connect(q, {}, { 'elasticmq.infra:9324': '127.0.0.1:19324' });
  assert.equal(broker.region, 'us-east-1');
  assert.equal(broker.endpoint, 'http://127.0.0.1:19324');
  assert.deepEqual(broker.credentials, { accessKeyId: 'AKIATESTKEY', secretAccessKey: 'very-secret-value' });
  assert.doesNotMatch(redactor.redact('key very-secret-value'), /very-secret-value/);
  assert.doesNotMatch(broker.display, /very-secret-value|AKIATESTKEY/);
});

test('a key without its pair, or no region anywhere, is a config error naming the env var', async () => {
  const half = queue('https://sqs.us-east-1.amazonaws.com/1/orders', [
    literal('KEY_ID', 'accessKeyId', 'AKIA'),
  ]);
  await assert.rejects(
    connect(half),
    (err: unknown) =>
      err instanceof SidecarError && err.code === 'config-missing' && /secretAccessKey/.test(err.message),
  );
  const noRegion = queue('http://elasticmq.infra:9324/000000000000/orders', [
    literal('AWS_REGION', 'region', 'placeholder'),
  ]);
  await assert.rejects(
    connect(noRegion, { AWS_REGION: '' }),
    (err: unknown) => err instanceof SidecarError && /AWS_REGION/.test(err.message),
  );
});
