// Workload stage: the declaration checked against the pod template, resolved into the plan the
// controller and queue-agent use.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Container, EnvVar, WorkloadLike } from '../../../core/queueConfig/podTemplate';
import { resolveWorkload } from '../../../core/queueConfig/resolveWorkload';
import type { ResolvedKafkaQueue } from '../../../core/providers/kafka/resolve';
import type { ResolvedRabbitQueue } from '../../../core/providers/rabbitmq/resolve';
import { formatFieldError, type FieldError } from '../../../core/result';

const ANNOTATION = `
queues:
  - name: orders
    container: app
    kafka:
      brokersEnv: KAFKA_BROKERS
      sourceEnv: ORDERS_TOPIC
      groupEnv: KAFKA_GROUP
      offsetReset: earliest
      tls: {caSecret: kafka-ca, caKey: ca.crt}
      sasl: {mechanism: SCRAM-SHA-512, usernameEnv: KAFKA_USERNAME, passwordEnv: KAFKA_PASSWORD}
  - name: invoices
    container: app
    rabbitmq:
      urlEnv: AMQP_URL
      managementUrlEnv: RABBITMQ_MANAGEMENT_URL
      sourceEnv: INVOICE_QUEUE
`;

const secretRef = (secret: string, key: string): EnvVar['valueFrom'] => ({
  secretKeyRef: { name: secret, key },
});

function appEnv(): EnvVar[] {
  return [
    { name: 'KAFKA_HOST', value: 'kafka.infra' },
    { name: 'KAFKA_BROKERS', value: '$(KAFKA_HOST):9092' },
    { name: 'ORDERS_TOPIC', value: 'orders' },
    { name: 'KAFKA_GROUP', value: 'order-service' },
    { name: 'KAFKA_USERNAME', valueFrom: { configMapKeyRef: { name: 'kafka-cfg', key: 'user' } } },
    { name: 'KAFKA_PASSWORD', valueFrom: secretRef('kafka-creds', 'password') },
    { name: 'AMQP_URL', valueFrom: secretRef('rabbit', 'url') },
    { name: 'RABBITMQ_MANAGEMENT_URL', value: 'http://rabbit:15672' },
    { name: 'INVOICE_QUEUE', value: 'invoices' },
  ];
}

function workload(options: {
  annotation?: string;
  containers?: Container[];
  kind?: string;
  volumes?: NonNullable<NonNullable<NonNullable<WorkloadLike['spec']>['template']>['spec']>['volumes'];
}): WorkloadLike {
  return {
    kind: options.kind ?? 'Deployment',
    metadata: {
      name: 'shop',
      namespace: 'team-a',
      uid: 'uid-1',
      annotations: { 'telepresence.io/queue-config': options.annotation ?? ANNOTATION },
    },
    spec: {
      template: {
        spec: {
          containers: options.containers ?? [
            { name: 'app', env: appEnv(), volumeMounts: [{ name: 'ca', mountPath: '/etc/ca' }] },
          ],
          volumes: options.volumes ?? [{ name: 'ca', secret: { secretName: 'kafka-ca' } }],
        },
      },
    },
  };
}

function errorsOf(w: WorkloadLike): FieldError[] {
  const result = resolveWorkload(w);
  assert.equal(result.ok, false, 'expected errors');
  return result.ok ? [] : result.errors;
}

function errorAt(list: FieldError[], path: string, problem: RegExp): FieldError {
  const found = list.find((e) => e.path === path && problem.test(e.problem));
  assert.ok(found, `no error at ${path} matching ${problem}; got:\n${list.map(formatFieldError).join('\n')}`);
  return found;
}

function withEnv(change: (env: EnvVar[]) => EnvVar[]): Container[] {
  return [{ name: 'app', env: change(appEnv()), volumeMounts: [{ name: 'ca' }] }];
}

describe('workload stage', () => {
  test('resolves the source, group and exact env sources for each queue', () => {
    const result = resolveWorkload(workload({}));
    assert.ok(result.ok, JSON.stringify(result));
    const { value } = result;
    assert.deepEqual(
      [value.kind, value.namespace, value.name, value.uid],
      ['Deployment', 'team-a', 'shop', 'uid-1'],
    );
    const orders = value.queues[0] as ResolvedKafkaQueue;
    assert.equal(orders.provider, 'kafka');
    assert.equal(orders.source, 'orders');
    assert.equal(orders.group, 'order-service');
    assert.equal(orders.saslMechanism, 'SCRAM-SHA-512');
    assert.deepEqual(orders.env, [
      { name: 'KAFKA_HOST', role: 'dependency', source: { kind: 'value', value: 'kafka.infra' } },
      { name: 'KAFKA_BROKERS', role: 'brokers', source: { kind: 'value', value: '$(KAFKA_HOST):9092' } },
      {
        name: 'KAFKA_USERNAME',
        role: 'username',
        source: { kind: 'configMapKeyRef', configMap: 'kafka-cfg', key: 'user', optional: false },
      },
      {
        name: 'KAFKA_PASSWORD',
        role: 'password',
        source: { kind: 'secretKeyRef', secret: 'kafka-creds', key: 'password', optional: false },
      },
    ]);
    const invoices = value.queues[1] as ResolvedRabbitQueue;
    assert.equal(invoices.source, 'invoices');
    assert.deepEqual(
      invoices.env.map((e) => [e.name, e.role, e.source.kind]),
      [
        ['AMQP_URL', 'url', 'secretKeyRef'],
        ['RABBITMQ_MANAGEMENT_URL', 'managementUrl', 'value'],
      ],
    );
  });

  test('container may be omitted when the pod has exactly one container, and is required otherwise', () => {
    const annotation = ANNOTATION.replace(/ {4}container: app\n/g, '');
    assert.ok(resolveWorkload(workload({ annotation })).ok);
    const two = errorsOf(
      workload({ annotation, containers: [{ name: 'app', env: appEnv() }, { name: 'proxy' }] }),
    );
    const error = errorAt(
      two,
      'queues[0].container',
      /is required: the pod template has 2 containers \(app, proxy\)/,
    );
    assert.match(error.fix, /container: <one of app, proxy>/);
    errorAt(
      errorsOf(workload({ containers: [{ name: 'web', env: appEnv() }] })),
      'queues[0].container',
      /no such container/,
    );
  });

  test('sourceEnv and groupEnv must be literal values', () => {
    const list = errorsOf(
      workload({
        containers: withEnv((env) =>
          env.map((e) =>
            e.name === 'KAFKA_GROUP' ? { name: e.name, valueFrom: secretRef('s', 'group') } : e,
          ),
        ),
      }),
    );
    const error = errorAt(list, 'queues[0].kafka.groupEnv', /not a literal value/);
    assert.match(error.fix, /value: <consumer group>/);
    const expanded = errorsOf(
      workload({
        containers: withEnv((env) =>
          env.map((e) => (e.name === 'ORDERS_TOPIC' ? { name: e.name, value: '$(PREFIX)-orders' } : e)),
        ),
      }),
    );
    errorAt(expanded, 'queues[0].kafka.sourceEnv', /\$\(\.\.\.\) expansion/);
    const empty = errorsOf(
      workload({
        containers: withEnv((env) =>
          env.map((e) => (e.name === 'INVOICE_QUEUE' ? { name: e.name, value: '' } : e)),
        ),
      }),
    );
    errorAt(empty, 'queues[1].rabbitmq.sourceEnv', /is empty/);
  });

  test('names supplied only by envFrom are rejected with the reason', () => {
    const containers: Container[] = [
      {
        name: 'app',
        env: appEnv().filter((e) => e.name !== 'KAFKA_PASSWORD' && e.name !== 'ORDERS_TOPIC'),
        envFrom: [{ secretRef: { name: 'everything' } }],
        volumeMounts: [{ name: 'ca' }],
      },
    ];
    const list = errorsOf(workload({ containers }));
    errorAt(list, 'queues[0].kafka.sasl.passwordEnv', /names supplied only by envFrom are not accepted/);
    errorAt(list, 'queues[0].kafka.sourceEnv', /not an explicit env entry/);
  });

  test('a missing env var without envFrom is reported as not set', () => {
    const list = errorsOf(
      workload({ containers: withEnv((env) => env.filter((e) => e.name !== 'AMQP_URL')) }),
    );
    errorAt(list, 'queues[1].rabbitmq.urlEnv', /AMQP_URL is not set in container "app"/);
  });

  test('fieldRef and resourceFieldRef are rejected: they would resolve against the agent pod', () => {
    for (const valueFrom of [
      { fieldRef: { fieldPath: 'metadata.name' } },
      { resourceFieldRef: { resource: 'limits.cpu' } },
    ]) {
      const list = errorsOf(
        workload({
          containers: withEnv((env) =>
            env.map((e) => (e.name === 'KAFKA_USERNAME' ? { name: e.name, valueFrom } : e)),
          ),
        }),
      );
      errorAt(list, 'queues[0].kafka.sasl.usernameEnv', /queue-agent's own pod/);
    }
  });

  test('a fieldRef reached through $(NAME) expansion is rejected too', () => {
    const list = errorsOf(
      workload({
        containers: withEnv((env) =>
          env.map((e) =>
            e.name === 'KAFKA_HOST'
              ? { name: e.name, valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } }
              : e,
          ),
        ),
      }),
    );
    errorAt(list, 'queues[0].kafka.brokersEnv', /KAFKA_HOST .* fieldRef/);
  });

  test('the TLS Secret must already be used by the container (env, envFrom or a mounted volume)', () => {
    const unmounted = errorsOf(
      workload({ containers: withEnv((env) => env).map((c) => ({ ...c, volumeMounts: [] })) }),
    );
    const error = errorAt(
      unmounted,
      'queues[0].kafka.tls.caSecret',
      /Secret "kafka-ca" is not used by container "app"/,
    );
    assert.match(error.fix, /mount it as a volume/);
    const viaEnv = withEnv((env) => [...env, { name: 'CA', valueFrom: secretRef('kafka-ca', 'ca.crt') }]).map(
      (c) => ({
        ...c,
        volumeMounts: [],
      }),
    );
    assert.ok(resolveWorkload(workload({ containers: viaEnv, volumes: [] })).ok);
    const projected = resolveWorkload(
      workload({ volumes: [{ name: 'ca', projected: { sources: [{ secret: { name: 'kafka-ca' } }] } }] }),
    );
    assert.ok(projected.ok);
    const viaEnvFrom = withEnv((env) => env).map((c) => ({
      ...c,
      volumeMounts: [],
      envFrom: [{ secretRef: { name: 'kafka-ca' } }],
    }));
    assert.ok(resolveWorkload(workload({ containers: viaEnvFrom, volumes: [] })).ok);
  });

  test('sourceEnv/groupEnv must be unique per container across queues', () => {
    const annotation = `${ANNOTATION}  - name: refunds
    container: app
    kafka: {brokersEnv: KAFKA_BROKERS, sourceEnv: REFUNDS_TOPIC, groupEnv: KAFKA_GROUP, offsetReset: latest}
`;
    const list = errorsOf(
      workload({
        annotation,
        containers: withEnv((env) => [...env, { name: 'REFUNDS_TOPIC', value: 'refunds' }]),
      }),
    );
    const error = errorAt(list, 'queues[2].kafka.groupEnv', /also queues\[0\]\.kafka\.groupEnv/);
    assert.match(error.fix, /its own source and group settings/);
  });

  test('the same source declared twice is refused, naming both entries', () => {
    // Two entries whose own env vars hold one topic and group (or one queue on one broker): each
    // engine would copy the whole source, so every message would be split twice.
    const annotation = `${ANNOTATION}  - name: orders-again
    container: app
    kafka: {brokersEnv: KAFKA_BROKERS, sourceEnv: ORDERS_TOPIC_2, groupEnv: KAFKA_GROUP_2, offsetReset: latest}
  - name: invoices-again
    container: app
    rabbitmq: {urlEnv: AMQP_URL, managementUrlEnv: RABBITMQ_MANAGEMENT_URL, sourceEnv: INVOICE_QUEUE_2}
`;
    const list = errorsOf(
      workload({
        annotation,
        containers: withEnv((env) => [
          ...env,
          { name: 'ORDERS_TOPIC_2', value: 'orders' },
          { name: 'KAFKA_GROUP_2', value: 'order-service' },
          { name: 'INVOICE_QUEUE_2', value: 'invoices' },
        ]),
      }),
    );
    const kafka = errorAt(list, 'queues[2].kafka.sourceEnv', /same source as queues\[0\] \("orders"\)/);
    assert.match(kafka.problem, /topic "orders".*group "order-service"/);
    assert.match(kafka.fix, /Declare the source once/);
    errorAt(list, 'queues[3].rabbitmq.sourceEnv', /same source as queues\[1\] \("invoices"\)/);
  });

  test('one topic read by two groups is two sources, not a duplicate', () => {
    const annotation = `${ANNOTATION}  - name: orders-audit
    container: app
    kafka: {brokersEnv: KAFKA_BROKERS, sourceEnv: AUDIT_TOPIC, groupEnv: AUDIT_GROUP, offsetReset: latest}
`;
    const result = resolveWorkload(
      workload({
        annotation,
        containers: withEnv((env) => [
          ...env,
          { name: 'AUDIT_TOPIC', value: 'orders' },
          { name: 'AUDIT_GROUP', value: 'order-audit' },
        ]),
      }),
    );
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatFieldError).join('\n'));
  });

  test('literal values are checked: topic names, broker lists, URL schemes and amqps with tls', () => {
    const badTopic = errorsOf(
      workload({
        containers: withEnv((env) =>
          env.map((e) => (e.name === 'ORDERS_TOPIC' ? { ...e, value: 'bad topic!' } : e)),
        ),
      }),
    );
    errorAt(badTopic, 'queues[0].kafka.sourceEnv', /not a valid Kafka topic name/);
    const reserved = errorsOf(
      workload({
        containers: withEnv((env) =>
          env.map((e) => (e.name === 'INVOICE_QUEUE' ? { ...e, value: 'amq.gen-1' } : e)),
        ),
      }),
    );
    errorAt(reserved, 'queues[1].rabbitmq.sourceEnv', /not a usable RabbitMQ queue name/);
    const badBrokers = errorsOf(
      workload({
        containers: withEnv((env) => env.map((e) => (e.name === 'KAFKA_BROKERS' ? { ...e, value: ',' } : e))),
      }),
    );
    errorAt(badBrokers, 'queues[0].kafka.brokersEnv', /not a broker list/);
    const httpMgmt = errorsOf(
      workload({
        containers: withEnv((env) =>
          env.map((e) => (e.name === 'RABBITMQ_MANAGEMENT_URL' ? { ...e, value: 'amqp://x' } : e)),
        ),
      }),
    );
    errorAt(httpMgmt, 'queues[1].rabbitmq.managementUrlEnv', /scheme "amqp:"/);
    const annotation = ANNOTATION.replace(
      'sourceEnv: INVOICE_QUEUE',
      'sourceEnv: INVOICE_QUEUE\n      tls: {}',
    );
    const plain = errorsOf(
      workload({
        annotation,
        containers: withEnv((env) =>
          env.map((e) => (e.name === 'AMQP_URL' ? { name: e.name, value: 'amqp://rabbit' } : e)),
        ),
      }),
    );
    errorAt(plain, 'queues[1].rabbitmq.urlEnv', /plain amqp: URL, but the queue declares tls/);
  });

  test('plain http management URL next to amqps is refused unless allowPlainHttpManagement is set', () => {
    const amqps = withEnv((env) =>
      env.map((e) => (e.name === 'AMQP_URL' ? { name: e.name, value: 'amqps://rabbit:5671' } : e)),
    );
    const refused = errorAt(
      errorsOf(workload({ containers: amqps })),
      'queues[1].rabbitmq.managementUrlEnv',
      /RABBITMQ_MANAGEMENT_URL is a plain http:\/\/ URL while AMQP_URL uses TLS/,
    );
    assert.match(
      refused.fix,
      /https:\/\/ management URL, or set queues\[1\]\.rabbitmq\.allowPlainHttpManagement: true/,
    );
    // A tls block means TLS even when the URL is a Secret the controller cannot read.
    const tls = ANNOTATION.replace('sourceEnv: INVOICE_QUEUE', 'sourceEnv: INVOICE_QUEUE\n      tls: {}');
    errorAt(
      errorsOf(workload({ annotation: tls })),
      'queues[1].rabbitmq.managementUrlEnv',
      /plain http:\/\/ URL while AMQP_URL uses TLS/,
    );
    const allowed = resolveWorkload(
      workload({
        annotation: ANNOTATION.replace(
          'sourceEnv: INVOICE_QUEUE',
          'sourceEnv: INVOICE_QUEUE\n      allowPlainHttpManagement: true',
        ),
        containers: amqps,
      }),
    );
    assert.ok(allowed.ok, JSON.stringify(allowed));
    assert.equal((allowed.value.queues[1] as ResolvedRabbitQueue).allowPlainHttpManagement, true);
  });

  test('the last of duplicate env entries counts, as in Kubernetes', () => {
    const result = resolveWorkload(
      workload({ containers: withEnv((env) => [...env, { name: 'ORDERS_TOPIC', value: 'orders-v2' }]) }),
    );
    assert.ok(result.ok);
    assert.equal(result.value.queues[0]!.source, 'orders-v2');
  });

  test('only Deployments and StatefulSets, and only annotated ones', () => {
    errorAt(errorsOf(workload({ kind: 'DaemonSet' })), 'kind', /Deployments and StatefulSets only/);
    assert.ok(resolveWorkload(workload({ kind: 'StatefulSet' })).ok);
    const bare: WorkloadLike = { kind: 'Deployment', metadata: { name: 'x' } };
    errorAt(errorsOf(bare), 'metadata.annotations["telepresence.io/queue-config"]', /is missing/);
  });

  test('annotation errors come through with their annotation paths; no partial plan', () => {
    const list = errorsOf(
      workload({ annotation: ANNOTATION.replace('offsetReset: earliest', 'offsetReset: never') }),
    );
    errorAt(list, 'queues[0].kafka.offsetReset', /must be one of/);
  });
});
