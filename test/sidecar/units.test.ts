// The sidecar's pure pieces, without services: CloudEvents mapping, backoff, address map, env
// expansion, redaction, flag validation and the protocol parser the extension uses.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { AddressMap } from '../../laptop/addressMap';
import { expandEnv } from '../../laptop/brokerConnection';
import type { ShadowMessage } from '../../core/shadowMessage';
import {
  cloudEventHeaders,
  encodeHeaderValue,
  headerValueBytes,
  mapHeaderName,
} from '../../sidecar/delivery/cloudEvents';
import { amqpDecimalText, amqpTimestampText, amqpValueText } from '../../sidecar/providers/rabbitmq';
import { backoffMs } from '../../sidecar/delivery/retry';
import { SidecarError } from '../../laptop/errors';
import { buildOptions, parseWorkload, type RawOptions } from '../../sidecar/options';
import { parseSidecarLine } from '../../core/sidecarProtocol';
import { Redactor, redactUrl } from '../../laptop/redact';

const source = { namespace: 'team-a', workload: 'orders', queue: 'orders' };

function kafkaMessage(overrides: Partial<ShadowMessage> = {}): ShadowMessage {
  return {
    queue: 'orders',
    id: '1-42',
    body: Buffer.from('{"n":1}'),
    time: new Date('2025-01-02T03:04:05.678Z'),
    headers: [],
    filterHeaders: new Map(),
    broker: {
      provider: 'kafka',
      partition: 1,
      offset: '42',
      key: Buffer.from('k1'),
      timestamp: '0',
      rawHeaders: {},
    },
    ...overrides,
  };
}

test('CloudEvents binary mode: the required attributes and content-type', () => {
  const h = cloudEventHeaders(kafkaMessage({ contentType: 'application/json' }), source);
  assert.equal(h['ce-specversion'], '1.0');
  assert.equal(h['ce-id'], '1-42');
  assert.equal(h['ce-source'], 'queuesplit://team-a/orders/orders');
  assert.equal(h['ce-type'], 'dev.queuesplit.message');
  assert.equal(h['ce-time'], '2025-01-02T03:04:05.678Z');
  assert.equal(h['content-type'], 'application/json');
  assert.equal(h['ce-partitionkey'], 'k1');
  const bare = cloudEventHeaders(
    kafkaMessage({
      broker: { provider: 'kafka', partition: 0, offset: '1', key: null, timestamp: '0', rawHeaders: {} },
    }),
    source,
  );
  assert.equal(bare['content-type'], 'application/octet-stream');
  assert.equal(bare['ce-partitionkey'], undefined);
});

test('header names: extension-safe → ce-, x- kept, others x-prefixed and escaped', () => {
  assert.equal(mapHeaderName('traceparent'), 'ce-traceparent');
  assert.equal(mapHeaderName('tenant'), 'ce-tenant');
  assert.equal(mapHeaderName('x-queue-split-user'), 'x-queue-split-user');
  assert.equal(mapHeaderName('X-Request-Id'), 'x-request-id');
  assert.equal(mapHeaderName('tenant-id'), 'x-tenant-id');
  assert.equal(mapHeaderName('id'), 'x-id', 'a core attribute name never becomes ce-id');
  assert.equal(mapHeaderName('partitionkey'), 'x-partitionkey');
  assert.equal(
    mapHeaderName('averyveryverylongname1'),
    'x-averyveryverylongname1',
    'over 20 characters is no extension name',
  );
  assert.equal(mapHeaderName('ünï code'), 'x-%c3%bcn%c3%af%20code');
  assert.equal(mapHeaderName('x-50%'), 'x-x-50%25', '% is the escape, so it is escaped itself');
});

test('header values: printable ASCII kept, the rest percent-encoded; repeated Kafka keys repeat', () => {
  assert.equal(encodeHeaderValue('alice'), 'alice');
  assert.equal(encodeHeaderValue('a b"c%'), 'a%20b%22c%25');
  assert.equal(encodeHeaderValue('zoë'), 'zo%C3%AB');
  assert.equal(encodeHeaderValue(Buffer.from([0xc3, 0x28, 0xff])), '%C3(%FF');
  assert.equal(headerValueBytes(7), '7');
  assert.equal(headerValueBytes(true), 'true');
  assert.equal(headerValueBytes({ a: [1, 'x'] }), '{"a":[1,"x"]}');
  const h = cloudEventHeaders(
    kafkaMessage({
      headers: [
        { name: 'x-queue-split-user', value: Buffer.from('bob') },
        { name: 'x-queue-split-user', value: Buffer.from('alice') },
        { name: 'content-type', value: Buffer.from('text/plain') },
        { name: 'ce-id', value: Buffer.from('spoof') },
      ],
      contentType: 'text/plain',
    }),
    source,
  );
  assert.deepEqual(h['x-queue-split-user'], ['bob', 'alice']);
  assert.equal(h['content-type'], 'text/plain');
  assert.equal(h['x-content-type'], undefined, 'the Kafka content-type header becomes the HTTP content-type');
  assert.equal(h['x-ce-id'], 'spoof', 'a broker header can never replace an attribute');
  assert.equal(h['ce-id'], '1-42');
});

test('AMQP decimal and timestamp edge cases: sign, scale, zero padding, outside the Date range', () => {
  assert.equal(amqpDecimalText(0, 7), '7');
  assert.equal(amqpDecimalText(2, 12_345), '123.45');
  assert.equal(amqpDecimalText(3, 5), '0.005');
  assert.equal(amqpDecimalText(3, 0x1_0000_0000 - 5), '-0.005', 'the 32-bit value is signed');
  assert.equal(amqpDecimalText(2, 0x80000000), '-21474836.48', 'the most negative value');
  assert.equal(amqpDecimalText(1, 0), '0.0');
  assert.equal(amqpTimestampText(0), '1970-01-01T00:00:00Z');
  assert.equal(amqpTimestampText(1e17), '100000000000000000', 'beyond JavaScript Dates: the seconds');
  assert.equal(headerValueBytes({ '!': 'timestamp', value: 86_400 }, amqpValueText), '1970-01-02T00:00:00Z');
  assert.equal(headerValueBytes({ n: Number.NaN, inf: Infinity }), '{"n":null,"inf":null}');
});

test('AMQP properties map to x-amqp-*', () => {
  const h = cloudEventHeaders(
    {
      queue: 'invoices',
      id: 'm-1',
      body: Buffer.alloc(0),
      time: new Date(0),
      headers: [{ name: 'attempt', value: 3 }],
      filterHeaders: new Map(),
      broker: {
        provider: 'rabbitmq',
        properties: { correlationId: 'c-9', priority: 5, messageId: 'm-1' },
        redelivered: false,
      },
    },
    { ...source, queue: 'invoices' },
  );
  assert.equal(h['x-amqp-correlation-id'], 'c-9');
  assert.equal(h['x-amqp-priority'], '5');
  assert.equal(h['ce-attempt'], '3');
});

test('backoff doubles from the initial delay and never exceeds the cap', () => {
  const policy = { initialMs: 250, maxMs: 5_000 };
  assert.equal(
    backoffMs(1, policy, () => 0.5),
    250,
  );
  assert.equal(
    backoffMs(3, policy, () => 0.5),
    1000,
  );
  for (let attempt = 1; attempt < 60; attempt++) {
    assert.ok(backoffMs(attempt, policy, () => 1) <= 5_000);
    assert.ok(backoffMs(attempt, policy, () => 0) >= 200);
  }
});

test('address map: host:port beats host, the port is kept when only the host maps', () => {
  const map = AddressMap.parse(['kafka.kafka.svc:9092=127.0.0.1:19092', 'rabbit.svc=localhost']);
  assert.deepEqual(map.dial('kafka.kafka.svc', 9092), { host: '127.0.0.1', port: 19092, mapped: true });
  assert.deepEqual(map.dial('kafka.kafka.svc', 9093), { host: 'kafka.kafka.svc', port: 9093, mapped: false });
  assert.equal(map.mapBroker('PLAINTEXT://kafka.kafka.svc:9092'), 'PLAINTEXT://127.0.0.1:19092');
  const url = map.mapUrl('amqps://u:p@rabbit.svc/vh');
  assert.equal(url.url, 'amqps://u:p@localhost:5671/vh');
  assert.equal(url.originalHost, 'rabbit.svc');
  assert.throws(
    () => AddressMap.parse(['nope']),
    (e) => e instanceof SidecarError && e.flag === '--map-address',
  );
  assert.throws(() => AddressMap.parse(['a:99999=b']), /not a host/);
});

test('env expansion follows Kubernetes: known $(NAME) replaced, $$ escapes, unknown kept', () => {
  const known = new Map([
    ['USER', 'app'],
    ['PASS', 's3cret'],
  ]);
  assert.equal(expandEnv('amqp://$(USER):$(PASS)@h', known), 'amqp://app:s3cret@h');
  assert.equal(expandEnv('$$(USER) $(OTHER)', known), '$(USER) $(OTHER)');
});

test('redaction: URL passwords and registered secrets never survive', () => {
  assert.equal(redactUrl('amqp://guest:hunter22@h:5672/v'), 'amqp://guest:***@h:5672/v');
  assert.equal(redactUrl('http://h/x'), 'http://h/x');
  const r = new Redactor();
  r.add('p@ss w0rd');
  assert.equal(
    r.redact('failed for amqp://u:p%40ss%20w0rd@h and p@ss w0rd'),
    'failed for amqp://u:***@h and ***',
  );
  assert.deepEqual(r.redactValue({ a: ['p@ss w0rd'], n: 1 }), { a: ['***'], n: 1 });
});

function raw(overrides: Partial<RawOptions>): RawOptions {
  return {
    mode: 'http',
    transport: 'agent',
    httpTimeout: 0,
    retryMaxDelay: 30_000,
    leaseSeconds: 60,
    readyTimeout: 300,
    detachTimeout: 300,
    pollInterval: 1000,
    stopGrace: 5,
    ...overrides,
  };
}

test('flags: each problem names its flag', () => {
  const flagOf = (o: Partial<RawOptions>) => {
    try {
      buildOptions(raw(o));
    } catch (err) {
      return err instanceof SidecarError ? err.flag : String(err);
    }
    return 'accepted';
  };
  assert.equal(flagOf({}), '--workload');
  assert.equal(flagOf({ workload: 'orders' }), '--target');
  assert.equal(flagOf({ workload: 'orders', target: 'ftp://x' }), '--target');
  assert.equal(flagOf({ workload: 'orders', target: 'http://127.0.0.1:1/', filter: 'user' }), '--filter');
  assert.equal(flagOf({ workload: 'job/x', target: 'http://127.0.0.1:1/' }), '--workload');
  assert.equal(flagOf({ workload: 'orders', mode: 'relay' }), '--relay-kafka-brokers');
  assert.equal(flagOf({ workload: 'orders', mode: 'env', env: ['1BAD=x'] }), '--env');
  assert.equal(flagOf({ workload: 'orders', mode: 'env', queue: ['Orders'] }), '--queue');
  assert.equal(flagOf({ workload: 'orders', split: 'qs-split-x', mode: 'env' }), '--split');
  assert.equal(flagOf({ split: 'qs-split-x', mode: 'env', preflightOnly: true }), '--preflight-only');
  assert.equal(flagOf({ workload: 'orders', mode: 'env', preflightOnly: true }), 'accepted');
  assert.equal(flagOf({ workload: 'orders', mode: 'env' }), 'accepted');
  assert.deepEqual(parseWorkload('sts/db'), { kind: 'StatefulSet', name: 'db' });
  assert.deepEqual(parseWorkload('orders'), { kind: 'Deployment', name: 'orders' });
});

test('protocol lines: parsed by envelope, anything else ignored', () => {
  assert.deepEqual(
    parseSidecarLine(
      '{"type":"delivered","time":"t","queue":"q","messageId":"1","attempts":1,"counts":{"delivered":1,"failed":0}}',
    )?.type,
    'delivered',
  );
  assert.equal(parseSidecarLine('not json'), undefined);
  assert.equal(parseSidecarLine('{"type":"unknown","time":"t"}'), undefined);
  assert.equal(parseSidecarLine('{"type":"ready"}'), undefined);
});

test('settings file: env, address map and relay merged under the flags; unknown keys refused', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-settings-'));
  const file = path.join(dir, 'settings.yaml');
  fs.writeFileSync(
    file,
    [
      'env:',
      '  KAFKA_BROKERS: 127.0.0.1:19092',
      '  AMQP_URL: amqp://from-settings',
      'addressMap:',
      '  kafka.svc:9092: 127.0.0.1:19092',
      'relay:',
      '  kafkaBrokers: 127.0.0.1:9092',
      '  to: {orders: local-orders}',
    ].join('\n'),
  );
  const options = buildOptions(
    raw({ workload: 'orders', mode: 'relay', settings: file, env: ['AMQP_URL=amqp://from-flag'] }),
  );
  assert.equal(options.env.get('KAFKA_BROKERS'), '127.0.0.1:19092');
  assert.equal(options.env.get('AMQP_URL'), 'amqp://from-flag', 'flags win');
  assert.deepEqual(options.addressMap.dial('kafka.svc', 9092), {
    host: '127.0.0.1',
    port: 19092,
    mapped: true,
  });
  assert.deepEqual(options.relay.brokers, { kafka: '127.0.0.1:9092' });
  assert.equal(options.relay.to.get('orders'), 'local-orders');
  fs.writeFileSync(file, 'brokers: x\n');
  assert.throws(
    () => buildOptions(raw({ workload: 'orders', mode: 'env', settings: file })),
    (e) => e instanceof SidecarError && e.flag === '--settings' && /brokers/.test(e.message),
  );
  fs.rmSync(dir, { recursive: true, force: true });
});
