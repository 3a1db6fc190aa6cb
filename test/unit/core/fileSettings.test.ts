// Queue names declared in mounted files (sourceFile/groupFile): the schema stage's one-of rule,
// resolution through the container's mount and the configMap volume to the ConfigMap key, and
// every refusal naming the field and the fix (core/queueConfig/fileResolution.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ResolvedKafkaQueue } from '../../../core/providers/kafka/resolve';
import type { ResolvedSqsQueue } from '../../../core/providers/sqs/resolve';
import type { ConfigMapData } from '../../../core/queueConfig/fileResolution';
import { withOriginalEnv, ORIGINAL_CONFIG_ANNOTATION } from '../../../core/queueConfig/originalEnv';
import { parseQueueConfig } from '../../../core/queueConfig/parseQueueConfig';
import type { Container, Volume, WorkloadLike } from '../../../core/queueConfig/podTemplate';
import { configMapsToRead, resolveWorkload } from '../../../core/queueConfig/resolveWorkload';
import { sourceOwnershipKey } from '../../../core/sourceOwnership';

const PROPERTIES = 'app.orders.topic=orders\nspring.kafka.consumer.group-id=orders-app\n';
const kafka = (file: string) =>
  `queues:\n  - name: orders\n    kafka: {brokersEnv: KAFKA_BROKERS, offsetReset: earliest, ${file}}`;
const BOTH_IN_FILE = kafka(
  'sourceFile: {path: /config/application.properties, key: app.orders.topic}, groupFile: {path: /config/application.properties, key: spring.kafka.consumer.group-id}',
);

function workload(options: {
  annotation?: string;
  mounts?: Container['volumeMounts'];
  volumes?: Volume[];
  annotations?: Record<string, string>;
}): WorkloadLike {
  return {
    kind: 'Deployment',
    metadata: {
      name: 'orders',
      namespace: 'team-a',
      uid: 'u1',
      annotations: {
        'telepresence.io/queue-config': options.annotation ?? BOTH_IN_FILE,
        ...options.annotations,
      },
    },
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: 'app',
              env: [{ name: 'KAFKA_BROKERS', value: 'kafka:9092' }],
              volumeMounts: options.mounts ?? [{ name: 'config', mountPath: '/config' }],
            },
          ],
          volumes: options.volumes ?? [{ name: 'config', configMap: { name: 'orders-config' } }],
        },
      },
    },
  };
}

const maps = (data: Record<string, ConfigMapData | undefined>) => new Map(Object.entries(data));
const standard = maps({ 'orders-config': { data: { 'application.properties': PROPERTIES } } });

function errorsOf(w: WorkloadLike, configMaps = standard): string[] {
  const r = resolveWorkload(w, configMaps);
  assert.ok(!r.ok, 'expected a refusal');
  return r.errors.map((e) => `${e.path}: ${e.problem} Fix: ${e.fix}`);
}

describe('sourceFile and groupFile', () => {
  test('resolve through the mount and configMap volume to the literal values', () => {
    const r = resolveWorkload(workload({}), standard);
    assert.ok(r.ok, JSON.stringify(r));
    const q = r.value.queues[0] as ResolvedKafkaQueue;
    assert.equal(q.source, 'orders');
    assert.equal(q.group, 'orders-app');
    assert.deepEqual(q.sourceAt, {
      kind: 'file',
      path: '/config/application.properties',
      key: 'app.orders.topic',
      format: 'properties',
      volume: 'config',
      configMap: 'orders-config',
      configMapKey: 'application.properties',
    });
  });

  test('a subPath mount and an items mapping lead to the right key', () => {
    const sub = workload({
      mounts: [{ name: 'config', mountPath: '/config/application.properties', subPath: 'app.props' }],
    });
    const props = maps({ 'orders-config': { data: { 'app.props': PROPERTIES } } });
    const r = resolveWorkload(sub, props);
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal((r.value.queues[0] as ResolvedKafkaQueue).sourceAt.kind, 'file');
    const items = workload({
      volumes: [
        {
          name: 'config',
          configMap: { name: 'orders-config', items: [{ key: 'app.props', path: 'application.properties' }] },
        },
      ],
    });
    const r2 = resolveWorkload(items, props);
    assert.ok(r2.ok, JSON.stringify(r2));
  });

  test('the caller reads the ConfigMaps only of a declaration with files', () => {
    assert.deepEqual(configMapsToRead(workload({})), ['orders-config']);
    const envOnly = kafka('sourceEnv: T, groupEnv: G');
    assert.deepEqual(configMapsToRead(workload({ annotation: envOnly })), []);
  });

  test('while split, resolution reads the original ConfigMap the volume named', () => {
    const split = workload({
      volumes: [{ name: 'config', configMap: { name: 'qs-cfg-abc' } }],
      annotations: { [ORIGINAL_CONFIG_ANNOTATION]: JSON.stringify({ config: 'orders-config' }) },
    });
    assert.deepEqual(configMapsToRead(withOriginalEnv(split)), ['orders-config']);
    assert.ok(resolveWorkload(withOriginalEnv(split), standard).ok);
  });

  test('exactly one of sourceEnv and sourceFile', () => {
    const both = parseQueueConfig(kafka('sourceEnv: T, sourceFile: {path: /c/a.yml, key: a}, groupEnv: G'));
    assert.ok(!both.ok);
    assert.match(both.errors[0]!.path, /sourceFile$/);
    const neither = parseQueueConfig(kafka('groupEnv: G'));
    assert.ok(!neither.ok);
    assert.equal(neither.errors[0]!.path, 'queues[0].kafka.sourceEnv');
    assert.match(neither.errors[0]!.fix, /sourceFile: \{path, key\}/);
    const relative = parseQueueConfig(kafka('sourceFile: {path: config/a.yml, key: a}, groupEnv: G'));
    assert.ok(!relative.ok);
    assert.match(relative.errors[0]!.path, /sourceFile\.path$/);
  });

  test('every way the file is not there is refused by name, with the fix', () => {
    const [outside] = errorsOf(workload({ mounts: [{ name: 'config', mountPath: '/etc/app' }] }));
    assert.match(
      outside!,
      /sourceFile: \/config\/application\.properties is not under a volume mount.*\/etc\/app/,
    );
    const [secret] = errorsOf(workload({ volumes: [{ name: 'config', secret: { secretName: 's' } }] }));
    assert.match(secret!, /not a configMap volume \(it is secret\)/);
    const [missing] = errorsOf(workload({}), maps({ 'orders-config': undefined }));
    assert.match(missing!, /ConfigMap "orders-config" \(volume "config"\) does not exist/);
    const [noKey] = errorsOf(workload({}), maps({ 'orders-config': { data: { other: '' } } }));
    assert.match(noKey!, /has no key "application\.properties"/);
    const [unread] = errorsOf(workload({}), maps({}));
    assert.match(unread!, /was not read.*Allow get on configmaps/);
    const [noFormat] = errorsOf(
      workload({ annotation: kafka('sourceFile: {path: /config/app.conf, key: a}, groupEnv: G') }),
    );
    assert.match(noFormat!, /Add format: properties, yaml or json/);
    const [badTopic] = errorsOf(
      workload({}),
      maps({
        'orders-config': {
          data: { 'application.properties': 'app.orders.topic=a b\nspring.kafka.consumer.group-id=g\n' },
        },
      }),
    );
    assert.match(
      badTopic!,
      /sourceFile: app\.orders\.topic in \/config\/application\.properties is "a b", which is not a valid Kafka topic/,
    );
  });

  test('two queues overriding one file key are refused', () => {
    const file = '/config/application.properties';
    const two = `queues:
  - name: orders
    kafka: {brokersEnv: KAFKA_BROKERS, offsetReset: earliest, sourceFile: {path: ${file}, key: app.orders.topic}, groupFile: {path: ${file}, key: spring.kafka.consumer.group-id}}
  - name: more
    kafka: {brokersEnv: KAFKA_BROKERS, offsetReset: latest, sourceFile: {path: ${file}, key: app.orders.topic}, groupFile: {path: ${file}, key: app.orders.topic}}`;
    const errors = errorsOf(workload({ annotation: two })).join('\n');
    assert.match(
      errors,
      /app\.orders\.topic in \/config\/application\.properties in container "app" is also queues\[0\]/,
    );
  });
});

describe('queueUrlFile (SQS)', () => {
  const URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders';
  const declaration = `queues:
  - name: orders
    sqs: {queueUrlFile: {path: /config/application.yml, key: app.orders.queue-url}}`;
  const yaml = `app:\n  orders:\n    queue-url: ${URL}\n`;
  const lookup = maps({ 'orders-config': { data: { 'application.yml': yaml } } });

  test('resolves the URL from the file; the queue-agent carries it as a literal of its own', () => {
    const r = resolveWorkload(workload({ annotation: declaration }), lookup);
    assert.ok(r.ok, JSON.stringify(r));
    const q = r.value.queues[0] as ResolvedSqsQueue;
    assert.equal(q.source, URL);
    assert.equal(q.sourceAt.kind, 'file');
    assert.deepEqual(q.env, [
      { name: 'QS_SQS_QUEUE_URL', role: 'queueUrl', source: { kind: 'value', value: URL } },
    ]);
    // The same queue declared by env has the same ownership key: two workloads, one source.
    assert.equal(
      sourceOwnershipKey('team-a', q),
      sourceOwnershipKey('team-a', {
        ...q,
        env: [{ name: 'QUEUE_URL', role: 'queueUrl', source: { kind: 'value', value: URL } }],
      }),
    );
  });

  test('a name where the URL belongs is refused naming the file key', () => {
    const named = maps({
      'orders-config': { data: { 'application.yml': 'app:\n  orders:\n    queue-url: orders\n' } },
    });
    const [error] = errorsOf(workload({ annotation: declaration }), named);
    assert.match(
      error!,
      /^queues\[0\]\.sqs\.queueUrlFile: app\.orders\.queue-url in \/config\/application\.yml \("orders"\)/,
    );
  });
});
