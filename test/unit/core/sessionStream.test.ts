// The session stream's contract, as pure logic: frames round-trip through MessagePack and are
// checked on arrival (a bad frame names what is wrong), a message keeps its bytes and header
// values (Kafka null values, AMQP byte arrays) on the wire, the secret is proven by a signature
// bound to route, pod and challenge, and the agent's window and settlement memory keep their invariants.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encode } from '@msgpack/msgpack';
import type { WebSocket } from 'ws';
import { RouteStream, SettledMemory, StreamClosed } from '../../../agent/sessionStream/routeStream';
import {
  newNonce,
  newSessionSecret,
  proofMatches,
  PUBLIC_KEY_PATTERN,
  SECRET_PATTERN,
  secretFits,
  sessionProof,
  sessionPublicKey,
} from '../../../core/sessionSecret';
import {
  decodeAgentFrame,
  decodeClientFrame,
  encodeFrame,
  type AgentFrame,
} from '../../../core/sessionStream';
import { fromWireMessage, toWireMessage, type ShadowMessage } from '../../../core/shadowMessage';
import { partOf } from '../../support/brokerPart';

describe('secret', () => {
  test('a proof answers one challenge of one route for one pod, and only with the secret behind the public key', () => {
    const secret = newSessionSecret();
    assert.match(secret, SECRET_PATTERN);
    const key = sessionPublicKey(secret);
    assert.match(key, PUBLIC_KEY_PATTERN);
    assert.ok(!key.includes(secret), 'the spec carries the public half only');
    assert.equal(secretFits(secret, key), true);
    assert.equal(secretFits(newSessionSecret(), key), false);
    const challenge = { routeId: 'r-1', podUid: 'pod-a', nonce: newNonce() };
    const proof = sessionProof(secret, challenge);
    assert.equal(proofMatches(key, challenge, proof), true);
    // What a look-alike pod or an eavesdropper gets cannot be used anywhere else.
    assert.equal(proofMatches(key, { ...challenge, podUid: 'pod-b' }, proof), false, 'another pod');
    assert.equal(proofMatches(key, { ...challenge, nonce: newNonce() }, proof), false, 'another challenge');
    assert.equal(proofMatches(key, { ...challenge, routeId: 'r-2' }, proof), false, 'another route');
    assert.equal(proofMatches(sessionPublicKey(newSessionSecret()), challenge, proof), false, 'another key');
    assert.equal(proofMatches('ed25519:short', challenge, proof), false, 'a malformed key matches nothing');
    assert.equal(proofMatches(key, challenge, 'garbage'), false, 'a malformed proof matches nothing');
  });
});

describe('frames', () => {
  test('a hello round-trips; one with a malformed proof or window is refused, naming the field', () => {
    const proof = sessionProof(newSessionSecret(), { routeId: 'r1', podUid: 'p', nonce: newNonce() });
    const hello = { type: 'hello' as const, routeId: 'r1', proof, window: 64 };
    const back = decodeClientFrame(encodeFrame(hello));
    assert.deepEqual(back, { ok: true, frame: hello });
    const bad = decodeClientFrame(encodeFrame({ ...hello, proof: 'short' }));
    assert.ok(!bad.ok && /proof/.test(bad.problem), JSON.stringify(bad));
    const big = decodeClientFrame(encode({ ...hello, window: 1_000_000 }));
    assert.ok(!big.ok && /window/.test(big.problem), JSON.stringify(big));
    const garbage = decodeClientFrame(Buffer.from([0xc1]));
    assert.ok(!garbage.ok && /MessagePack/.test(garbage.problem));
    const unknown = decodeAgentFrame(encode({ type: 'nonsense' }));
    assert.ok(!unknown.ok);
  });

  test('a Kafka message keeps its body, key, partition, offset and header values (null and repeated) on the wire', () => {
    const message: ShadowMessage = {
      queue: 'orders',
      id: '2-41',
      body: Buffer.from([0, 1, 2, 255]),
      time: new Date(1_700_000_000_123),
      headers: [],
      filterHeaders: new Map(),
      broker: {
        provider: 'kafka',
        partition: 2,
        offset: '41',
        key: Buffer.from('k'),
        timestamp: '1700000000123',
        rawHeaders: {
          'x-queue-split-user': Buffer.from('alice'),
          nothing: null,
          twice: [Buffer.from('a'), Buffer.from('b')],
        },
      },
    };
    const frame: AgentFrame = { type: 'message', tag: 7, queue: 'orders', message: toWireMessage(message) };
    const decoded = decodeAgentFrame(encodeFrame(frame));
    assert.ok(decoded.ok && decoded.frame.type === 'message', JSON.stringify(decoded));
    const back = fromWireMessage('orders', decoded.frame.message);
    assert.deepEqual(back.body, message.body);
    assert.ok(Buffer.isBuffer(back.body));
    assert.equal(back.time.getTime(), message.time.getTime());
    assert.deepEqual(partOf(back, 'kafka')?.key, Buffer.from('k'));
    assert.equal(partOf(back, 'kafka')?.partition, 2);
    assert.equal(partOf(back, 'kafka')?.offset, '41');
    assert.equal(partOf(back, 'kafka')?.rawHeaders.nothing, null, 'a null header value stays null');
    assert.deepEqual(partOf(back, 'kafka')?.rawHeaders.twice, [Buffer.from('a'), Buffer.from('b')]);
    assert.equal(back.filterHeaders.get('x-queue-split-user'), 'alice', 'the filter view is recomputed');
    assert.deepEqual(
      back.headers.map((h) => h.name),
      ['x-queue-split-user', 'nothing', 'twice', 'twice'],
    );
  });

  test('an AMQP message keeps its properties and typed header values; byte arrays come back as Buffers', () => {
    const message: ShadowMessage = {
      queue: 'invoices',
      id: 'm-1',
      body: Buffer.from('{"a":1}'),
      time: new Date(1_700_000_000_000),
      contentType: 'application/json',
      headers: [],
      filterHeaders: new Map(),
      broker: {
        provider: 'rabbitmq',
        properties: {
          contentType: 'application/json',
          messageId: 'm-1',
          timestamp: 1_700_000_000,
          headers: {
            'x-queue-split-user': 'alice',
            n: 42,
            f: 1.5,
            raw: Buffer.from([9, 8]),
            nested: { list: [1, 'two', Buffer.from([3])] },
            when: { '!': 'timestamp', value: 1_700_000_000 },
          },
        },
        redelivered: true,
      },
    };
    const decoded = decodeAgentFrame(
      encodeFrame({ type: 'message', tag: 1, queue: 'invoices', message: toWireMessage(message) }),
    );
    assert.ok(decoded.ok && decoded.frame.type === 'message');
    const back = fromWireMessage('invoices', decoded.frame.message);
    const headers = partOf(back, 'rabbitmq')?.properties.headers as Record<string, unknown>;
    assert.equal(back.id, 'm-1');
    assert.equal(partOf(back, 'rabbitmq')?.redelivered, true);
    assert.equal(headers.n, 42);
    assert.equal(headers.f, 1.5);
    assert.ok(Buffer.isBuffer(headers.raw));
    assert.deepEqual(headers.raw, Buffer.from([9, 8]));
    assert.ok(Buffer.isBuffer((headers.nested as { list: unknown[] }).list[2]));
    assert.deepEqual(headers.when, { '!': 'timestamp', value: 1_700_000_000 });
    assert.equal(back.filterHeaders.get('x-queue-split-user'), 'alice');
  });
});

/** Enough of a WebSocket for RouteStream: records what it sends. */
function fakeSocket(): { ws: WebSocket; sent: AgentFrame[] } {
  const sent: AgentFrame[] = [];
  const ws = {
    OPEN: 1,
    CONNECTING: 0,
    readyState: 1,
    send: (data: Uint8Array) => {
      const d = decodeAgentFrame(data);
      if (d.ok) sent.push(d.frame);
    },
    close: () => undefined,
  } as unknown as WebSocket;
  return { ws, sent };
}

const msg = (id: string): ShadowMessage => ({
  queue: 'q',
  id,
  body: Buffer.from(id),
  time: new Date(),
  headers: [],
  filterHeaders: new Map(),
  broker: { provider: 'rabbitmq', properties: {}, redelivered: false },
});

describe('RouteStream', () => {
  test('the window: a send waits while `window` messages are unacked; an ack frees exactly one credit each', async () => {
    const { ws, sent } = fakeSocket();
    const stream = new RouteStream(ws, 'r', 2, new SettledMemory());
    const a = await stream.send('q', msg('a'));
    await stream.send('q', msg('b'));
    let third = false;
    const c = stream.send('q', msg('c')).then(() => (third = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(third, false, 'no third message while two are unacked');
    stream.onAck([a.tag, a.tag]); // a repeated ack frees one credit, not two
    await c;
    let fourth = false;
    void stream.send('q', msg('d')).then(() => (fourth = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(fourth, false);
    assert.deepEqual(
      sent.map((f) => (f.type === 'message' ? f.message.id : f.type)),
      ['a', 'b', 'c'],
    );
  });

  test('a handler that keeps failing blocks the route: a reject answers its tag once, frees its credit like an ack, and is told apart from an ack; a reject frame round-trips and a welcome announces it', async () => {
    const { ws } = fakeSocket();
    const stream = new RouteStream(ws, 'r', 1, new SettledMemory());
    const bad = await stream.send('q', msg('bad'));
    let next = false;
    const waiting = stream.send('q', msg('next')).then((sent) => {
      next = true;
      return sent;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(next, false, 'blocked: the window is full');
    stream.onReject([bad.tag]);
    stream.onAck([bad.tag]); // a later answer for the same tag changes nothing
    assert.equal(await bad.answered, 'reject');
    const second = await waiting;
    stream.onAck([second.tag]);
    assert.equal(await second.answered, 'ack');
    assert.deepEqual(stream.counts, { sent: 2, acked: 1, rejected: 1, settled: 0 });
    const frame = { type: 'reject' as const, tags: [1, 2] };
    assert.deepEqual(decodeClientFrame(encodeFrame(frame)), { ok: true, frame });
    const welcome = decodeAgentFrame(
      encodeFrame({
        type: 'welcome',
        routeId: 'r',
        queues: [],
        window: 1,
        settled: [],
        features: ['reject'],
      }),
    );
    assert.ok(welcome.ok && welcome.frame.type === 'welcome');
    assert.deepEqual(welcome.frame.features, ['reject']);
    const old = decodeAgentFrame(
      encodeFrame({ type: 'welcome', routeId: 'r', queues: [], window: 1, settled: [] }),
    );
    assert.ok(
      old.ok && old.frame.type === 'welcome' && old.frame.features === undefined,
      'an older agent welcomes without it',
    );
  });

  test('the frames of one turn leave in one write: the socket is corked at the first and uncorked before the next turn, once per turn', async () => {
    const { ws, sent } = fakeSocket();
    const events: string[] = [];
    const socket = {
      cork: () => events.push('cork'),
      uncork: () => events.push(`uncork after ${sent.length}`),
    };
    const stream = new RouteStream(ws, 'r', 8, new SettledMemory(), [], undefined, socket);
    const a = await stream.send('q', msg('a'));
    await stream.send('q', msg('b'));
    stream.onAck([a.tag]);
    await stream.send('q', msg('c'));
    assert.deepEqual(events, ['cork'], 'one cork for the turn, not one per frame');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(events, ['cork', 'uncork after 3'], 'released before the next turn');
    await stream.send('q', msg('d'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(events, ['cork', 'uncork after 3', 'cork', 'uncork after 4'], 'each turn corks anew');
  });

  test('stop: what was sent and not acked never resolves as acked, waiting sends fail, settlements still go out until finish', async () => {
    const { ws, sent } = fakeSocket();
    const memory = new SettledMemory();
    const stream = new RouteStream(ws, 'r', 1, memory);
    const first = await stream.send('q', msg('a'));
    const waiting = stream.send('q', msg('b'));
    stream.stop('client gone');
    await assert.rejects(first.answered, StreamClosed);
    await assert.rejects(waiting, StreamClosed);
    stream.settle([first.tag]); // a reader that committed anyway (it was acked before the stop)
    stream.finish('client gone');
    assert.ok(sent.some((f) => f.type === 'settled'));
  });

  test('the settlement memory answers which of a resumed client’s unsettled messages were committed, bounded', () => {
    const memory = new SettledMemory(2);
    memory.remember({ queue: 'q', id: '1' });
    memory.remember({ queue: 'q', id: '2' });
    memory.remember({ queue: 'q', id: '3' });
    assert.deepEqual(
      memory.settled([
        { queue: 'q', id: '1' },
        { queue: 'q', id: '3' },
        { queue: 'other', id: '3' },
      ]),
      [{ queue: 'q', id: '3' }],
    );
  });
});
