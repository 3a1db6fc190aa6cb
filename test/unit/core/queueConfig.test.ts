// Schema stage of the queue declaration: the annotation alone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseQueueConfig, validateQueueConfig } from '../../../core/queueConfig/parseQueueConfig';
import { formatFieldError, type FieldError } from '../../../core/result';

const DESIGN_EXAMPLE = `
queues:
  - name: orders            # logical name, unique in the workload; the only name users type
    container: app          # required unless the pod has exactly one container
    kafka:
      brokersEnv: KAFKA_BROKERS
      sourceEnv: ORDERS_TOPIC
      groupEnv: KAFKA_GROUP
      offsetReset: earliest  # required: where a partition without a committed offset starts
      tls: {caSecret: kafka-ca, caKey: ca.crt}
      sasl: {mechanism: SCRAM-SHA-512, usernameEnv: KAFKA_USERNAME, passwordEnv: KAFKA_PASSWORD}
  - name: invoices
    container: app
    rabbitmq:
      urlEnv: AMQP_URL
      managementUrlEnv: RABBITMQ_MANAGEMENT_URL
      sourceEnv: INVOICE_QUEUE
`;

function errors(text: string): FieldError[] {
  const result = parseQueueConfig(text);
  assert.equal(result.ok, false, 'expected errors');
  return result.ok ? [] : result.errors;
}

function errorAt(list: FieldError[], path: string): FieldError {
  const found = list.find((e) => e.path === path);
  assert.ok(found, `no error at ${path}; got ${list.map(formatFieldError).join(' | ')}`);
  return found;
}

const kafka = (extra = '') =>
  `queues:\n  - name: orders\n    kafka:\n      brokersEnv: B\n      sourceEnv: T\n      groupEnv: G\n      offsetReset: latest\n${extra}`;

describe('schema stage', () => {
  test('accepts the docs/design.md §3 example', () => {
    const result = parseQueueConfig(DESIGN_EXAMPLE);
    assert.ok(result.ok, JSON.stringify(result));
    const [orders, invoices] = result.value.queues;
    assert.ok(orders && 'kafka' in orders);
    assert.equal(orders.kafka.sasl?.mechanism, 'SCRAM-SHA-512');
    assert.ok(invoices && 'rabbitmq' in invoices);
    assert.equal(invoices.rabbitmq.sourceEnv, 'INVOICE_QUEUE');
  });

  test('accepts every Kafka mode: PLAINTEXT, TLS, SASL PLAIN and SCRAM, with or without TLS', () => {
    assert.ok(parseQueueConfig(kafka()).ok);
    assert.ok(parseQueueConfig(kafka('      tls: {}\n')).ok);
    assert.ok(parseQueueConfig(kafka('      tls: {caSecret: ca, caKey: ca.crt}\n')).ok);
    for (const mechanism of ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']) {
      assert.ok(
        parseQueueConfig(kafka(`      sasl: {mechanism: ${mechanism}, usernameEnv: U, passwordEnv: P}\n`)).ok,
      );
    }
  });

  test('accepts RabbitMQ with URL credentials or username/password env, amqp or amqps', () => {
    const base = 'queues:\n  - name: q\n    rabbitmq: {urlEnv: U, managementUrlEnv: M, sourceEnv: S';
    assert.ok(parseQueueConfig(`${base}}`).ok);
    assert.ok(parseQueueConfig(`${base}, usernameEnv: RU, passwordEnv: RP}`).ok);
    assert.ok(parseQueueConfig(`${base}, tls: {caSecret: ca, caKey: ca.crt}}`).ok);
  });

  test('accepts JSON too (YAML is a superset)', () => {
    const json = JSON.stringify({
      queues: [{ name: 'q', rabbitmq: { urlEnv: 'U', managementUrlEnv: 'M', sourceEnv: 'S' } }],
    });
    assert.ok(parseQueueConfig(json).ok);
  });

  test('unknown keys are errors with a "did you mean"', () => {
    const list = errors(kafka('      brokerEnv: X\n'));
    const error = errorAt(list, 'queues[0].kafka.brokerEnv');
    assert.match(error.problem, /unknown key/);
    assert.match(error.fix, /Did you mean "brokersEnv"\?/);
    assert.match(errorAt(errors(`${kafka()}x: 1\n`), 'x').fix, /Allowed here: queues/);
    assert.match(
      errorAt(errors(kafka().replace('    kafka:', '    contianer: app\n    kafka:')), 'queues[0].contianer')
        .fix,
      /container/,
    );
  });

  test('a missing required field names the field and says what it is for', () => {
    const error = errorAt(
      errors(kafka().replace('      offsetReset: latest\n', '')),
      'queues[0].kafka.offsetReset',
    );
    assert.equal(error.problem, 'is required.');
    assert.match(error.fix, /offsetReset: .*partition without a committed offset/);
  });

  test('enum values suggest the closest valid one', () => {
    const error = errorAt(errors(kafka().replace('latest', 'earlist')), 'queues[0].kafka.offsetReset');
    assert.match(error.fix, /Did you mean earliest\?/);
    const sasl = errors(kafka('      sasl: {mechanism: SCRAM, usernameEnv: U, passwordEnv: P}\n'));
    assert.match(
      errorAt(sasl, 'queues[0].kafka.sasl.mechanism').problem,
      /PLAIN, SCRAM-SHA-256, SCRAM-SHA-512/,
    );
  });

  test('exactly one provider block per queue', () => {
    const both = errors('queues:\n  - name: q\n    kafka: {}\n    rabbitmq: {}\n');
    assert.match(errorAt(both, 'queues[0]').problem, /both a kafka and a rabbitmq block/);
    const none = errors('queues:\n  - name: q\n');
    assert.match(errorAt(none, 'queues[0]').problem, /no provider block/);
    const typo = errors('queues:\n  - name: q\n    rabbit: {}\n');
    assert.match(errorAt(typo, 'queues[0]').fix, /Did you mean rabbitmq\?/);
  });

  test('queue names are unique and DNS labels', () => {
    const dup = errors(
      `${kafka()}  - name: orders\n    rabbitmq: {urlEnv: U, managementUrlEnv: M, sourceEnv: S}\n`,
    );
    assert.match(errorAt(dup, 'queues[1].name').problem, /already the name of queues\[0\]/);
    const bad = errorAt(errors(kafka().replace('name: orders', 'name: Orders_1')), 'queues[0].name');
    assert.match(bad.problem, /not a logical queue name/);
  });

  test('wrong types say what was expected and how to write it', () => {
    const error = errorAt(
      errors(kafka().replace('sourceEnv: T', 'sourceEnv: 12')),
      'queues[0].kafka.sourceEnv',
    );
    assert.match(error.problem, /must be a string, got number 12/);
    assert.match(error.fix, /Quote it/);
    assert.match(errorAt(errors('queues: {}'), 'queues').problem, /must be a list/);
  });

  test('one env var cannot serve two settings of a queue', () => {
    const list = errors(kafka().replace('groupEnv: G', 'groupEnv: T'));
    assert.match(errorAt(list, 'queues[0].kafka.groupEnv').problem, /already this queue's sourceEnv/);
  });

  test('paired settings: caSecret with caKey, usernameEnv with passwordEnv', () => {
    assert.match(
      errorAt(errors(kafka('      tls: {caSecret: ca}\n')), 'queues[0].kafka.tls.caKey').fix,
      /both/,
    );
    const rabbit = errors(
      'queues:\n  - name: q\n    rabbitmq: {urlEnv: U, managementUrlEnv: M, sourceEnv: S, usernameEnv: X}\n',
    );
    errorAt(rabbit, 'queues[0].rabbitmq.passwordEnv');
  });

  test('empty, non-map and empty-list declarations are refused clearly', () => {
    assert.match(errorAt(errors(''), '').fix, /queues:/);
    assert.match(errorAt(errors('- a'), '').problem, /must be a map/);
    assert.match(errorAt(errors('queues: []'), 'queues').problem, /at least 1 entry/);
    assert.equal(validateQueueConfig(null).ok, false);
  });

  test('YAML syntax errors point at line and column; duplicate keys and several documents are refused', () => {
    assert.match(errors('queues:\n  - name: [\n')[0]!.problem, /line \d+, column \d+/);
    assert.match(errors('queues: []\nqueues: []\n')[0]!.problem, /unique/);
    assert.match(errors('queues: []\n---\nqueues: []\n')[0]!.problem, /several YAML documents/);
  });

  test('every error has a path, a problem and a fix', () => {
    const list = errors('queues:\n  - name: X\n    kafka: {brokersEnv: 1, sasl: {mechanism: NONE}}\n  - 7\n');
    assert.ok(list.length >= 5);
    for (const error of list) {
      assert.equal(typeof error.path, 'string');
      assert.ok(error.problem.length > 0);
      assert.ok(error.fix.length > 0);
    }
  });
});
