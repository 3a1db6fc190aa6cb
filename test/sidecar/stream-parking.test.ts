// The sidecar's half of the session stream when a message cannot be carried (sidecar/agentStream.ts
// invariant 4), or was given up on (a reject: invariant 1): the real AgentStream, in the test process, against a scripted agent on a local
// WebSocket that sends exactly the frames a case needs (no brokers, no cluster). The agent's half
// of the same case, with the real brokers, is in agent-stream.test.ts.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { Provider } from '../../core/providers';
import { newNonce } from '../../core/sessionSecret';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ShadowMessage } from '../../core/shadowMessage';
import {
  SESSION_PATH,
  decodeClientFrame,
  encodeFrame,
  type AgentFrame,
  type ClientFrame,
  type WireMessage,
} from '../../core/sessionStream';
import { fixedEndpoint } from '../../sidecar/agentPortForward';
import { AgentStream } from '../../sidecar/agentStream';
import type { DeliveryHandler } from '../../sidecar/consumers/types';
import { Reporter } from '../../sidecar/output';
import { parseSidecarLine, type SidecarMessage } from '../../core/sidecarProtocol';
import { pollUntil } from '../support/poll';

/** A scripted agent: challenges, welcomes every hello, sends what the test says, records what comes back. */
async function scriptedAgent(queues: { name: string; provider: Provider }[], features?: string[]) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', path: SESSION_PATH });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const received: ClientFrame[] = [];
  let hellos = 0;
  let current: WebSocket | undefined;
  wss.on('connection', (ws) => {
    // As the queue-agent does: a challenge first (this scripted agent welcomes any proof).
    ws.send(encodeFrame({ type: 'challenge', nonce: newNonce(), podUid: 'scripted-agent' }));
    ws.on('message', (data: Buffer) => {
      const decoded = decodeClientFrame(data);
      if (!decoded.ok) return;
      received.push(decoded.frame);
      if (decoded.frame.type === 'bye') ws.close();
      if (decoded.frame.type === 'hello') {
        hellos++;
        current = ws;
        ws.send(
          encodeFrame({
            type: 'welcome',
            routeId: decoded.frame.routeId,
            queues,
            window: 64,
            settled: [],
            ...(features !== undefined ? { features } : {}),
          }),
        );
      }
    });
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}${SESSION_PATH}`,
    hellos: () => hellos,
    acked: () => received.flatMap((f) => (f.type === 'ack' ? f.tags : [])),
    rejected: () => received.flatMap((f) => (f.type === 'reject' ? f.tags : [])),
    send: (frame: AgentFrame) => current?.send(encodeFrame(frame)),
    close: () => new Promise<void>((resolve) => wss.close(() => resolve())),
  };
}

/** The sidecar's protocol lines, as the extension would read them. */
function recordingReporter(): { reporter: Reporter; lines: SidecarMessage[] } {
  const lines: SidecarMessage[] = [];
  const stdout = new Writable({
    write: (chunk: Buffer, _e, done) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        const m = parseSidecarLine(line);
        if (m) lines.push(m);
      }
      done();
    },
  });
  return { reporter: new Reporter(stdout, new Writable({ write: (_c, _e, done) => done() })), lines };
}

function wire(id: string, extra: Partial<WireMessage> = {}): WireMessage {
  return { id, body: Buffer.from(id), time: Date.now(), headers: [], ...extra };
}

const kafkaPart = (partition: number, offset: number): Partial<WireMessage> => ({
  kafka: { partition, offset: String(offset), key: null, timestamp: String(Date.now()), headers: {} },
});

const amqpPart: Partial<WireMessage> = { amqp: { properties: {}, redelivered: false } };

test('one message stalls a route forever: a message whose local delivery fails (not by stopping) is parked and reported once, never acked; the rest of its RabbitMQ queue flows, what follows it on its Kafka partition waits, other partitions flow, and the stream never reconnects', async () => {
  const agent = await scriptedAgent([
    { name: 'orders', provider: 'kafka' },
    { name: 'invoices', provider: 'rabbitmq' },
  ]);
  const { reporter, lines } = recordingReporter();
  const delivered: string[] = [];
  const handler: DeliveryHandler = {
    deliver: (m: ShadowMessage) => {
      if (m.id.startsWith('bad')) return Promise.reject(new TypeError('cannot map this message'));
      delivered.push(m.id);
      return Promise.resolve({ settle: 'ack', attempts: 1 });
    },
    settled: () => undefined,
  };
  const fatal: string[] = [];
  const stream = new AgentStream({
    routeId: 'r-parking-0000001',
    secret: 'a'.repeat(43),
    endpoint: fixedEndpoint(agent.url),
    handlers: new Map([
      ['orders', handler],
      ['invoices', handler],
    ]),
    reporter,
    onFatal: (err) => fatal.push(err.message),
    startTimeoutMs: 10_000,
  });
  try {
    await stream.start();
    let tag = 0;
    const tags = new Map<string, number>();
    const send = (queue: string, message: WireMessage) => {
      tags.set(message.id, tag);
      agent.send({ type: 'message', tag: tag++, queue, message });
    };
    send('invoices', wire('inv-0', amqpPart));
    send(
      'invoices',
      wire('bad-inv', { ...amqpPart, amqp: { properties: { messageId: 'bad-inv' }, redelivered: false } }),
    );
    send('invoices', wire('inv-2', amqpPart));
    send('orders', wire('p0-0', kafkaPart(0, 0)));
    send('orders', wire('bad-p0', kafkaPart(0, 1)));
    send('orders', wire('p0-2', kafkaPart(0, 2)));
    send('orders', wire('p1-0', kafkaPart(1, 0)));
    send('orders', wire('p1-1', kafkaPart(1, 1)));
    await pollUntil(
      'the deliverable ones acked',
      async () => agent.acked().length,
      (n) => n >= 5,
      10_000,
    );
    await new Promise((r) => setTimeout(r, 500));
    // The parked one comes again (a resumed stream of the real agent would send it first).
    send(
      'invoices',
      wire('bad-inv', { ...amqpPart, amqp: { properties: { messageId: 'bad-inv' }, redelivered: true } }),
    );
    await new Promise((r) => setTimeout(r, 500));

    assert.deepEqual(delivered.sort(), ['inv-0', 'inv-2', 'p0-0', 'p1-0', 'p1-1'].sort());
    const acked = new Set(agent.acked());
    for (const id of ['bad-inv', 'bad-p0', 'p0-2'])
      assert.ok(!acked.has(tags.get(id)!), `${id} not acked: it stays in the shadow`);
    const parked = lines.filter((l) => l.type === 'warning' && l.code === 'message-parked');
    assert.equal(parked.length, 2, 'each parked message reported once');
    const texts = parked.map((p) => (p.type === 'warning' ? `${p.queue} ${p.message}` : ''));
    assert.ok(texts.some((t) => t.startsWith('invoices') && t.includes('DEGRADED') && t.includes('bad-inv')));
    assert.ok(texts.some((t) => t.startsWith('orders') && t.includes('bad-p0') && t.includes('partition 0')));
    assert.ok(
      !texts.some((t) => t.includes('cannot map this message')),
      'no error text (it may quote a value)',
    );
    assert.equal(agent.hellos(), 1, 'no reconnect');
    assert.deepEqual(fatal, []);
  } finally {
    await stream.stop();
    await agent.close();
  }
});

test('one message stalls a route forever: a message frame the sidecar cannot read (time NaN, as an agent sent for an AMQP timestamp of 2**53) is parked and reported, the messages after it flow, and the stream never reconnects', async () => {
  const agent = await scriptedAgent([{ name: 'invoices', provider: 'rabbitmq' }]);
  const { reporter, lines } = recordingReporter();
  const delivered: string[] = [];
  const handler: DeliveryHandler = {
    deliver: (m: ShadowMessage) => {
      delivered.push(m.id);
      return Promise.resolve({ settle: 'ack', attempts: 1 });
    },
    settled: () => undefined,
  };
  const stream = new AgentStream({
    routeId: 'r-parking-0000002',
    secret: 'b'.repeat(43),
    endpoint: fixedEndpoint(agent.url),
    handlers: new Map([['invoices', handler]]),
    reporter,
    onFatal: () => undefined,
    startTimeoutMs: 10_000,
  });
  try {
    await stream.start();
    agent.send({ type: 'message', tag: 0, queue: 'invoices', message: wire('m-0', amqpPart) });
    agent.send({
      type: 'message',
      tag: 1,
      queue: 'invoices',
      message: wire('m-nan', { ...amqpPart, time: Number.NaN }),
    });
    agent.send({ type: 'message', tag: 2, queue: 'invoices', message: wire('m-2', amqpPart) });
    await pollUntil(
      'the readable ones acked',
      async () => agent.acked().length,
      (n) => n >= 2,
      10_000,
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(delivered, ['m-0', 'm-2']);
    assert.deepEqual(agent.acked().sort(), [0, 2]);
    const parked = lines.filter((l) => l.type === 'warning' && l.code === 'message-parked');
    assert.equal(parked.length, 1);
    assert.ok(parked[0]!.type === 'warning' && parked[0]!.message.includes('m-nan'));
    assert.equal(agent.hellos(), 1, 'no reconnect');
    assert.equal(stream.counts.unreadableFrames, 1);
    assert.equal(stream.counts.parked, 1);
  } finally {
    await stream.stop();
    await agent.close();
  }
});

test('a handler that keeps failing blocks the route: a message the developer rejected goes back as a reject frame to an agent that takes rejects, is reported once the agent settles it, and is parked, never sent, with an agent from before rejects', async () => {
  const settled: string[] = [];
  const rejecting: DeliveryHandler = {
    deliver: (m: ShadowMessage) =>
      Promise.resolve(
        m.id.startsWith('bad')
          ? { settle: 'reject', attempts: 3, rejectedBy: 'request', reason: 'HTTP 500' }
          : { settle: 'ack', attempts: 1 },
      ),
    settled: (m, d) => settled.push(`${m.id}:${d.settle}`),
  };
  for (const features of [['reject'], undefined]) {
    settled.length = 0;
    const agent = await scriptedAgent([{ name: 'invoices', provider: 'rabbitmq' }], features);
    const { reporter, lines } = recordingReporter();
    const stream = new AgentStream({
      routeId: 'r-parking-0000003',
      secret: 'c'.repeat(43),
      endpoint: fixedEndpoint(agent.url),
      handlers: new Map([['invoices', rejecting]]),
      reporter,
      onFatal: () => undefined,
      startTimeoutMs: 10_000,
    });
    try {
      await stream.start();
      agent.send({ type: 'message', tag: 0, queue: 'invoices', message: wire('ok-0', amqpPart) });
      agent.send({ type: 'message', tag: 1, queue: 'invoices', message: wire('bad-1', amqpPart) });
      agent.send({ type: 'message', tag: 2, queue: 'invoices', message: wire('ok-2', amqpPart) });
      await pollUntil(
        'the deliverable ones acked',
        async () => agent.acked().length,
        (n) => n >= 2,
        10_000,
      );
      const parked = lines.filter((l) => l.type === 'warning' && l.code === 'message-parked');
      if (features !== undefined) {
        await pollUntil(
          'the rejected one answered',
          async () => agent.rejected(),
          (tags) => tags.length === 1,
          10_000,
        );
        assert.deepEqual(agent.rejected(), [1]);
        assert.deepEqual(agent.acked().sort(), [0, 2]);
        assert.equal(stream.rejectUnavailable(), undefined);
        agent.send({ type: 'settled', tags: [0, 1, 2] });
        await pollUntil(
          'reported once settled',
          async () => settled.length,
          (n) => n === 3,
          10_000,
        );
        assert.deepEqual(settled.sort(), ['bad-1:reject', 'ok-0:ack', 'ok-2:ack']);
        assert.equal(parked.length, 0);
      } else {
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(agent.rejected(), [], 'no reject frame to an agent that would end the stream on it');
        assert.match(stream.rejectUnavailable() ?? '', /cannot reject/);
        assert.equal(parked.length, 1);
        assert.ok(parked[0]!.type === 'warning' && parked[0]!.message.includes('bad-1'));
      }
      assert.equal(agent.hellos(), 1, 'no reconnect');
    } finally {
      await stream.stop();
      await agent.close();
    }
  }
});
