// "Write Queue Config Annotation…": what the pod template's env says (never a Secret's value),
// the declaration proposed from it, validated by core/queueConfig as the controller validates
// the annotation, and what the command shows (the diff's two sides) and hands out (the patch).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import type { Container, EnvVar, WorkloadLike } from '../../../core/queueConfig/podTemplate';
import { parseQueueConfig } from '../../../core/queueConfig/parseQueueConfig';
import { QUEUE_CONFIG_ANNOTATION } from '../../../core/queueConfig/schema';
import { formatFieldError } from '../../../core/result';
import { annotateForbidden } from '../../../extension/model/annotation/forbidden';
import {
  ambiguousRoles,
  declarationState,
  describeEnv,
  dnsLabel,
  envFacts,
  propose,
  queueNameFor,
  rulesOf,
  sameBasis,
  surveyWorkload,
  unresolvedRoles,
  validateProposal,
  withAnnotation,
  type ProposalChoice,
} from '../../../extension/model/annotation/infer';
import {
  annotationPatch,
  clipboardPatch,
  kubectlPatchCommand,
  shellQuote,
  workloadYaml,
} from '../../../extension/model/annotation/render';

const secretRef = (name: string, key: string): EnvVar['valueFrom'] => ({ secretKeyRef: { name, key } });

function deployment(env: EnvVar[], more: Partial<Container>[] = []): WorkloadLike {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'orders-app', namespace: 'shop', uid: 'u1' },
    spec: {
      replicas: 1,
      template: { spec: { containers: [{ name: 'app', env }, ...more.map((c) => ({ name: 'x', ...c }))] } },
    },
  };
}

/** The survey of the only container, and the proposal for `choice` (sources as given). */
function proposeFor(
  workload: WorkloadLike,
  choice: Omit<ProposalChoice, 'container'> & { container?: string },
) {
  const surveys = surveyWorkload(workload);
  const survey = surveys.find((s) => s.container === (choice.container ?? 'app'));
  assert.ok(survey);
  const containers = workload.spec?.template?.spec?.containers.length ?? 0;
  return propose(survey, { container: survey.container, ...choice }, containers);
}

const kafkaEnv: EnvVar[] = [
  { name: 'KAFKA_BOOTSTRAP_SERVERS', value: 'kafka.infra:9092' },
  { name: 'ORDERS_TOPIC', value: 'orders' },
  { name: 'PAYMENTS_TOPIC', value: 'payments.v2' },
  { name: 'DLQ_TOPIC', value: 'orders-dlq' },
  { name: 'PAYMENTS_GROUP_ID', value: 'payments-app' },
  { name: 'ORDERS_GROUP_ID', value: 'orders-app' },
  { name: 'KAFKA_SASL_MECHANISM', value: 'SCRAM-SHA-512' },
  { name: 'KAFKA_SASL_USERNAME', valueFrom: secretRef('kafka-user', 'username') },
  { name: 'KAFKA_SASL_PASSWORD', valueFrom: secretRef('kafka-user', 'password') },
  { name: 'AUTO_OFFSET_RESET', value: 'earliest' },
  { name: 'LOG_LEVEL', value: 'info' },
];

describe('reading the env', () => {
  test('literal values are read; references say only where the value lives', () => {
    const facts = envFacts({
      name: 'app',
      env: [
        { name: 'A', value: 'x' },
        { name: 'S', valueFrom: secretRef('amqp', 'url') },
        { name: 'C', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'topic' } } },
        { name: 'P', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'A', value: 'last wins' },
      ],
    });
    assert.deepEqual(facts, [
      { name: 'S', from: { kind: 'secret', name: 'amqp', key: 'url' } },
      { name: 'C', from: { kind: 'configMap', name: 'cfg', key: 'topic' } },
      { name: 'P', unusable: true },
      { name: 'A', value: 'last wins' },
    ]);
    assert.equal(describeEnv(facts[0]!), 'from Secret amqp (key url)');
    assert.equal(describeEnv(facts[1]!), 'from ConfigMap cfg (key topic)');
    assert.equal(describeEnv(facts[3]!), '= last wins');
  });

  test('a Kafka consumer: the topics it consumes first, the one it writes dead letters to offered unpicked', () => {
    const [survey] = surveyWorkload(deployment(kafkaEnv));
    assert.equal(survey?.providers[0]?.provider, 'kafka');
    const kafka = survey!.providers[0]!;
    assert.deepEqual(
      kafka.sources.map((s) => [s.env.name, s.score >= 3]),
      [
        ['ORDERS_TOPIC', true],
        ['PAYMENTS_TOPIC', true],
        ['DLQ_TOPIC', false],
      ],
    );
    assert.equal(kafka.roles.brokersEnv?.[0]?.env.name, 'KAFKA_BOOTSTRAP_SERVERS');
    assert.deepEqual(unresolvedRoles(kafka, { sources: ['ORDERS_TOPIC'] }), []);
    assert.deepEqual(ambiguousRoles(kafka, { sources: ['ORDERS_TOPIC'] }), []);
  });

  test('a workload with nothing queue-like offers no provider', () => {
    const surveys = surveyWorkload(
      deployment([
        { name: 'PORT', value: '8080' },
        { name: 'DATABASE_URL', valueFrom: secretRef('db', 'url') },
        { name: 'TOPIC', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'topic' } } },
      ]),
    );
    assert.deepEqual(
      surveys.map((s) => s.providers),
      [[]],
      'a topic from a configMapKeyRef is not a literal the controller can override',
    );
  });
});

describe('the proposal', () => {
  test('Kafka: a queue per topic, each with the group its name matches, SASL with the mechanism the env writes out', () => {
    const workload = deployment(kafkaEnv);
    const proposal = proposeFor(workload, { provider: 'kafka', sources: ['ORDERS_TOPIC', 'PAYMENTS_TOPIC'] });
    assert.deepEqual(proposal.config, {
      queues: [
        {
          name: 'orders',
          kafka: {
            brokersEnv: 'KAFKA_BOOTSTRAP_SERVERS',
            sourceEnv: 'ORDERS_TOPIC',
            groupEnv: 'ORDERS_GROUP_ID',
            offsetReset: 'earliest',
            sasl: {
              mechanism: 'SCRAM-SHA-512',
              usernameEnv: 'KAFKA_SASL_USERNAME',
              passwordEnv: 'KAFKA_SASL_PASSWORD',
            },
          },
        },
        {
          name: 'payments',
          kafka: {
            brokersEnv: 'KAFKA_BOOTSTRAP_SERVERS',
            sourceEnv: 'PAYMENTS_TOPIC',
            groupEnv: 'PAYMENTS_GROUP_ID',
            offsetReset: 'earliest',
            sasl: {
              mechanism: 'SCRAM-SHA-512',
              usernameEnv: 'KAFKA_SASL_USERNAME',
              passwordEnv: 'KAFKA_SASL_PASSWORD',
            },
          },
        },
      ],
    });
    // The text is what gets written: the schema reads it back to the same declaration.
    const reparsed = parseQueueConfig(proposal.text);
    assert.ok(reparsed.ok);
    assert.deepEqual(reparsed.value, proposal.config);
    const valid = validateProposal(workload, proposal.text);
    assert.ok(valid.ok, valid.ok ? '' : valid.errors.map(formatFieldError).join('\n'));
    assert.deepEqual(
      valid.value.queues.map((q) => [q.name, q.source]),
      [
        ['orders', 'orders'],
        ['payments', 'payments.v2'],
      ],
    );
    assert.ok(!proposal.text.includes('kafka-user'), 'no Secret name in the declaration: it names env vars');
  });

  test('Kafka without an offset reset in the env: the answer given, else latest (Kafka’s default)', () => {
    const env = kafkaEnv.filter((e) => e.name !== 'AUTO_OFFSET_RESET');
    const given = proposeFor(deployment(env), {
      provider: 'kafka',
      sources: ['ORDERS_TOPIC'],
      answers: { offsetReset: 'earliest' },
    });
    assert.equal(given.answers.offsetReset, 'earliest');
    const unanswered = proposeFor(deployment(env), { provider: 'kafka', sources: ['ORDERS_TOPIC'] });
    assert.equal(unanswered.answers.offsetReset, 'latest');
  });

  test('Kafka SASL without a written-out mechanism is left out, and a note says so', () => {
    const env = kafkaEnv.filter((e) => e.name !== 'KAFKA_SASL_MECHANISM');
    const proposal = proposeFor(deployment(env), { provider: 'kafka', sources: ['ORDERS_TOPIC'] });
    const block = (proposal.config.queues[0] as { kafka: { sasl?: unknown } }).kafka;
    assert.equal(block.sasl, undefined);
    assert.match(proposal.notes.join('\n'), /SASL credentials \(KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD\)/);
  });

  test('RabbitMQ as the test fixture declares it: the AMQP URL from a Secret (not read), the queue from a literal', () => {
    const workload = deployment([
      { name: 'AMQP_URL', valueFrom: secretRef('amqp', 'url') },
      { name: 'RABBITMQ_MANAGEMENT_URL', value: 'http://rabbitmq.infra:15672' },
      { name: 'SOURCE_QUEUE', value: 'orders-q1' },
    ]);
    const [survey] = surveyWorkload(workload);
    assert.deepEqual(
      survey?.providers.map((p) => p.provider),
      ['rabbitmq'],
    );
    const proposal = proposeFor(workload, { provider: 'rabbitmq', sources: ['SOURCE_QUEUE'] });
    assert.deepEqual(proposal.config, {
      queues: [
        {
          name: 'orders-q1',
          rabbitmq: {
            urlEnv: 'AMQP_URL',
            managementUrlEnv: 'RABBITMQ_MANAGEMENT_URL',
            sourceEnv: 'SOURCE_QUEUE',
          },
        },
      ],
    });
    assert.match(proposal.notes.join('\n'), /AMQP_URL comes from Secret amqp \(key url\), which is not read/);
    assert.ok(validateProposal(workload, proposal.text).ok);
  });

  test('RabbitMQ over amqps:// gets tls: {}', () => {
    const workload = deployment([
      { name: 'RABBITMQ_URL', value: 'amqps://rabbitmq.infra:5671' },
      { name: 'RABBITMQ_MANAGEMENT_URL', value: 'https://rabbitmq.infra:15671' },
      { name: 'INVOICE_QUEUE', value: 'invoices' },
    ]);
    const proposal = proposeFor(workload, { provider: 'rabbitmq', sources: ['INVOICE_QUEUE'] });
    assert.deepEqual(proposal.config.queues[0], {
      name: 'invoice',
      rabbitmq: {
        urlEnv: 'RABBITMQ_URL',
        managementUrlEnv: 'RABBITMQ_MANAGEMENT_URL',
        sourceEnv: 'INVOICE_QUEUE',
        tls: {},
      },
    });
    assert.ok(validateProposal(workload, proposal.text).ok);
  });

  test('RabbitMQ without a management URL: the setting is unresolved (the command asks), the proposal refused by the schema', () => {
    const workload = deployment([
      { name: 'AMQP_URL', value: 'amqp://rabbitmq:5672' },
      { name: 'SOURCE_QUEUE', value: 'orders' },
    ]);
    const rabbit = surveyWorkload(workload)[0]?.providers[0];
    assert.ok(rabbit);
    assert.deepEqual(
      unresolvedRoles(rabbit, { sources: ['SOURCE_QUEUE'] }).map((r) => r.field),
      ['managementUrlEnv'],
    );
    const proposal = proposeFor(workload, { provider: 'rabbitmq', sources: ['SOURCE_QUEUE'] });
    const valid = validateProposal(workload, proposal.text);
    assert.ok(!valid.ok);
    assert.match(valid.errors.map(formatFieldError).join('\n'), /managementUrlEnv/);
    // Chosen by the person (the command's pick), it validates.
    const chosen = proposeFor(
      deployment([
        ...workload.spec!.template!.spec!.containers[0]!.env!,
        { name: 'MGMT', value: 'http://rabbitmq:15672' },
      ]),
      { provider: 'rabbitmq', sources: ['SOURCE_QUEUE'], roles: { managementUrlEnv: 'MGMT' } },
    );
    assert.equal(
      (chosen.config.queues[0] as { rabbitmq: { managementUrlEnv: string } }).rabbitmq.managementUrlEnv,
      'MGMT',
    );
  });

  test('two equally likely AMQP URLs are ambiguous: the command lets the person choose', () => {
    const workload = deployment([
      { name: 'AMQP_URL', value: 'amqp://a:5672' },
      { name: 'LEGACY_AMQP_URL', value: 'amqp://b:5672' },
      { name: 'RABBITMQ_MANAGEMENT_URL', value: 'http://a:15672' },
      { name: 'SOURCE_QUEUE', value: 'orders' },
    ]);
    const rabbit = surveyWorkload(workload)[0]!.providers[0]!;
    assert.deepEqual(
      ambiguousRoles(rabbit, { sources: ['SOURCE_QUEUE'] }).map((r) => r.field),
      ['urlEnv'],
    );
    assert.deepEqual(
      ambiguousRoles(rabbit, { sources: ['SOURCE_QUEUE'], roles: { urlEnv: 'AMQP_URL' } }),
      [],
    );
  });

  test('SQS: a queue per queue URL, region and endpoint env, static keys from Secrets', () => {
    const workload = deployment([
      { name: 'ORDERS_QUEUE_URL', value: 'http://elasticmq.infra:9324/000000000000/orders.fifo' },
      { name: 'AWS_REGION', value: 'eu-west-1' },
      { name: 'AWS_ENDPOINT_URL_SQS', value: 'http://elasticmq.infra:9324' },
      { name: 'AWS_ACCESS_KEY_ID', valueFrom: secretRef('aws', 'id') },
      { name: 'AWS_SECRET_ACCESS_KEY', valueFrom: secretRef('aws', 'secret') },
    ]);
    const proposal = proposeFor(workload, { provider: 'sqs', sources: ['ORDERS_QUEUE_URL'] });
    assert.deepEqual(proposal.config.queues[0], {
      name: 'orders',
      sqs: {
        queueUrlEnv: 'ORDERS_QUEUE_URL',
        regionEnv: 'AWS_REGION',
        endpointEnv: 'AWS_ENDPOINT_URL_SQS',
        credentials: 'static',
        accessKeyIdEnv: 'AWS_ACCESS_KEY_ID',
        secretAccessKeyEnv: 'AWS_SECRET_ACCESS_KEY',
      },
    });
    const valid = validateProposal(workload, proposal.text);
    assert.ok(valid.ok, valid.ok ? '' : valid.errors.map(formatFieldError).join('\n'));
  });

  test('several containers: the entry names its container', () => {
    const workload = deployment(kafkaEnv, [{ name: 'proxy', env: [{ name: 'PORT', value: '8080' }] }]);
    const proposal = proposeFor(workload, { provider: 'kafka', sources: ['ORDERS_TOPIC'] });
    assert.equal(proposal.config.queues[0]?.container, 'app');
    assert.ok(validateProposal(workload, proposal.text).ok);
  });

  test('two topics and one group: proposed as the env has it, and refused by the workload checks (one group cannot serve two queues)', () => {
    const workload = deployment([
      { name: 'KAFKA_BROKERS', value: 'kafka:9092' },
      { name: 'ORDERS_TOPIC', value: 'orders' },
      { name: 'REFUNDS_TOPIC', value: 'refunds' },
      { name: 'KAFKA_GROUP_ID', value: 'orders-app' },
    ]);
    const proposal = proposeFor(workload, { provider: 'kafka', sources: ['ORDERS_TOPIC', 'REFUNDS_TOPIC'] });
    const valid = validateProposal(workload, proposal.text);
    assert.ok(!valid.ok);
    assert.match(valid.errors.map(formatFieldError).join('\n'), /one setting cannot serve two queues/);
  });

  test('logical names: from the env name, else from the source, as DNS labels, unique', () => {
    const kafka = rulesOf('kafka');
    const sqs = rulesOf('sqs');
    assert.equal(queueNameFor(kafka, 'ORDERS_TOPIC', 'x'), 'orders');
    assert.equal(queueNameFor(kafka, 'KAFKA_TOPIC', 'Orders.V1'), 'orders-v1');
    assert.equal(
      queueNameFor(sqs, 'SQS_QUEUE_URL', 'https://sqs.eu-west-1.amazonaws.com/1/Billing_Events.fifo'),
      'billing-events',
    );
    assert.equal(dnsLabel(`--${'a'.repeat(70)}`), 'a'.repeat(63));
    const workload = deployment([
      { name: 'KAFKA_BROKERS', value: 'kafka:9092' },
      { name: 'KAFKA_TOPIC', value: 'orders' },
      { name: 'KAFKA_INPUT_TOPIC', value: 'orders' },
      { name: 'KAFKA_GROUP_ID', value: 'g' },
    ]);
    const proposal = proposeFor(workload, {
      provider: 'kafka',
      sources: ['KAFKA_TOPIC', 'KAFKA_INPUT_TOPIC'],
    });
    assert.deepEqual(
      proposal.queues.map((q) => q.name),
      ['orders', 'orders-2'],
    );
  });
});

describe('the workload around it', () => {
  test('its declaration as the view judges it', () => {
    assert.deepEqual(declarationState(deployment(kafkaEnv)), { state: 'none' });
    const text = proposeFor(deployment(kafkaEnv), { provider: 'kafka', sources: ['ORDERS_TOPIC'] }).text;
    assert.deepEqual(declarationState(withAnnotation(deployment(kafkaEnv), text)), {
      state: 'valid',
      queues: ['orders'],
    });
    const broken = declarationState(withAnnotation(deployment(kafkaEnv), 'queues: []'));
    assert.equal(broken.state, 'invalid');
  });

  test('applied only to what was shown: the same pod template and annotation', () => {
    const read = deployment(kafkaEnv);
    assert.ok(sameBasis(read, { ...read, spec: { ...read.spec, replicas: 5 } }), 'replicas do not matter');
    assert.ok(!sameBasis(read, deployment(kafkaEnv.slice(1))), 'an env change does');
    assert.ok(!sameBasis(read, withAnnotation(read, 'queues: []')), 'an annotation written meanwhile does');
  });

  test('the diff’s two sides differ only in the annotation; status and managedFields are left out', () => {
    const live = {
      ...deployment(kafkaEnv),
      metadata: {
        name: 'orders-app',
        namespace: 'shop',
        creationTimestamp: new Date('2026-12-06T10:00:00Z'),
        annotations: { 'deployment.kubernetes.io/revision': '3' },
        managedFields: [{ manager: 'kubectl' }],
      },
      status: { replicas: 1 },
    };
    const ref = { kind: 'Deployment' as const, name: 'orders-app', namespace: 'shop', context: 'dev' };
    const text = 'queues:\n  - name: orders\n';
    const before = workloadYaml(ref, live);
    const after = workloadYaml(ref, live, text);
    assert.doesNotMatch(before, /^\s*managedFields:/m);
    assert.doesNotMatch(before, /^status:/m);
    assert.match(before, /creationTimestamp: 2026-12-06T10:00:00Z/);
    const added = after.split('\n').filter((line) => !before.split('\n').includes(line));
    assert.deepEqual(added, [`    ${QUEUE_CONFIG_ANNOTATION}: |`, '      queues:', '        - name: orders']);
    const doc = parse(after) as { metadata: { annotations: Record<string, string> } };
    assert.equal(doc.metadata.annotations[QUEUE_CONFIG_ANNOTATION], text);
  });

  test('the copied patch is the manifest snippet and a merge patch; its kubectl command survives the shell', () => {
    const ref = { kind: 'StatefulSet' as const, name: 'ledger', namespace: "o'brien", context: 'dev' };
    const text = "queues:\n  - name: it's\n";
    const copied = clipboardPatch(ref, text);
    assert.deepEqual(parse(copied), annotationPatch(text));
    const command = kubectlPatchCommand(ref, text);
    assert.match(
      command,
      /^kubectl --context dev --namespace 'o'\\''brien' patch statefulset ledger --type merge --patch '/,
    );
    assert.ok(copied.includes(`#   ${command}`));
    assert.equal(shellQuote('plain-word_1.2'), 'plain-word_1.2');
    // The shell reads the quoted patch back to the same JSON.
    const quoted = command.slice(command.indexOf("--patch '") + '--patch '.length);
    const unquoted = quoted.slice(1, -1).replace(/'\\''/g, "'");
    assert.deepEqual(JSON.parse(unquoted), annotationPatch(text));
  });

  test('a 403 names the missing right, how to check it, what to ask for, and the way around it', () => {
    const { message, suggestedAction } = annotateForbidden({
      kind: 'Deployment',
      name: 'orders-app',
      namespace: 'shop',
      context: 'dev',
    });
    assert.match(message, /may not patch deployments\.apps\/orders-app in namespace shop/);
    assert.match(suggestedAction, /Copy as Patch/);
    assert.match(
      suggestedAction,
      /kubectl create role queue-config-writer -n shop --verb=get,patch --resource=deployments\.apps/,
    );
    assert.match(suggestedAction, /kubectl auth can-i patch deployments\.apps\/orders-app -n shop/);
  });
});
