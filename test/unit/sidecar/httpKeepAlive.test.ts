// http mode's kept-alive connections (sidecar/delivery/http.ts, keepAlive.ts) against real local
// http servers that misbehave the ways a kept-alive socket can: closed by the target as it is
// reused, closed while idle, reset on every request, answering late, never ending a body. The
// delivery contract around them is the real one (QueuePipeline and its retry loop): a message is
// delivered once a 2xx answers it, each answer counts for its own message only, and a stale socket
// is neither a failed attempt nor "target down".
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import type { ShadowMessage } from '../../../core/shadowMessage';
import type { SidecarMessage } from '../../../core/sidecarProtocol';
import { HttpDeliverer, type HttpDeliveryOptions } from '../../../sidecar/delivery/http';
import { QueuePipeline } from '../../../sidecar/delivery/pipeline';
import { StopSignals } from '../../../sidecar/delivery/retry';
import { Reporter } from '../../../sidecar/output';

function recording(): { reporter: Reporter; lines: SidecarMessage[] } {
  const lines: SidecarMessage[] = [];
  const out = new Writable({
    write: (chunk: Buffer, _e, done) => {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as SidecarMessage);
      done();
    },
  });
  return { reporter: new Reporter(out, new Writable({ write: (_c, _e, done) => done() })), lines };
}

const message = (id: string): ShadowMessage => ({
  queue: 'invoices',
  id,
  body: Buffer.from(`${id}-body`),
  time: new Date(),
  headers: [],
  filterHeaders: new Map([['x-queue-split-user', 'alice']]),
  broker: { provider: 'rabbitmq', properties: {}, redelivered: false },
});

interface Handled {
  id: string;
  /** Which connection (0, 1, …) and the how-manieth request on it (1, 2, …). */
  connection: number;
  onConnection: number;
}

/**
 * A target whose `answer` decides per request: a status (answered at once or after `delayMs`),
 * 'drop' (the socket destroyed, nothing answered), or 'endless' (200, then a body never ended).
 */
async function target(
  answer: (r: Handled) => { status: number; delayMs?: number } | 'drop' | 'endless',
): Promise<{
  url: URL;
  server: http.Server;
  handled: Handled[];
  dropped: Handled[];
  connections: () => number;
  open: () => number;
  close: () => Promise<void>;
}> {
  const handled: Handled[] = [];
  const dropped: Handled[] = [];
  const sockets = new Map<Socket, { n: number; requests: number }>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    const seen = sockets.get(req.socket)!;
    seen.requests++;
    const r = { id: String(req.headers['ce-id']), connection: seen.n, onConnection: seen.requests };
    const what = answer(r);
    if (what === 'drop') {
      dropped.push(r);
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on('end', () => {
      handled.push(r);
      if (what === 'endless') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('never ends');
        return;
      }
      const reply = () => res.writeHead(what.status).end();
      if (what.delayMs) setTimeout(reply, what.delayMs);
      else reply();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.set(socket, { n: connections++, requests: 0 });
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const closeAll = () => {
    for (const socket of sockets.keys()) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  servers.push(closeAll);
  return {
    url: new URL(`http://127.0.0.1:${port}/events`),
    server,
    handled,
    dropped,
    connections: () => connections,
    open: () => sockets.size,
    close: closeAll,
  };
}

const servers: (() => Promise<void>)[] = [];
const deliverers: HttpDeliverer[] = [];
after(async () => {
  await Promise.all(deliverers.map((d) => d.close()));
  await Promise.all(servers.map((close) => close()));
});

function deliverer(url: URL, reporter: Reporter, extra: Partial<HttpDeliveryOptions> = {}): HttpDeliverer {
  const d = new HttpDeliverer({
    target: url,
    source: (queue) => ({ namespace: 'team', workload: 'app', queue }),
    timeoutMs: 0,
    reporter,
    ...extra,
  });
  deliverers.push(d);
  return d;
}

/** The real pipeline around `d`: retried with a short backoff, never given up on. */
function pipeline(d: HttpDeliverer, reporter: Reporter): QueuePipeline {
  return new QueuePipeline(
    'invoices',
    { 'x-queue-split-user': 'alice' },
    d,
    reporter,
    { initialMs: 20, maxMs: 100 },
    new StopSignals(),
    { provider: 'rabbitmq', cannotReject: () => undefined },
  );
}

const never = () => new AbortController().signal;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('http delivery over kept-alive connections', () => {
  test('a steady flow reuses one connection, and each message gets its own answer', async () => {
    const t = await target((r) => ({ status: Number(r.id.split('-')[1]) % 3 === 0 ? 503 : 200 }));
    const { reporter } = recording();
    const d = deliverer(t.url, reporter);
    const results = [];
    for (let i = 1; i <= 12; i++) results.push(await d.attempt(message(`m-${i}`), never()));
    assert.deepEqual(
      results.map((r) => r.ok),
      Array.from({ length: 12 }, (_, i) => (i + 1) % 3 !== 0),
    );
    assert.equal(t.connections(), 1, 'one connection for the whole flow');
    assert.deepEqual(
      t.handled.map((h) => h.onConnection),
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
  });

  test('a keep-alive socket closed by the target as the next message reuses it: that message is delivered once, on a new connection, with no failed attempt and no target-down', async () => {
    // Every second request on a connection finds it closed: what a target's idle close racing
    // our reuse looks like from here (nothing answered, the socket reset).
    const t = await target((r) => (r.onConnection >= 2 ? 'drop' : { status: 200 }));
    const { reporter, lines } = recording();
    const p = pipeline(deliverer(t.url, reporter), reporter);
    for (let i = 1; i <= 6; i++) {
      const m = message(`m-${i}`);
      const delivery = await p.deliver(m);
      assert.deepEqual(delivery, { settle: 'ack', attempts: 1 }, `m-${i}: one attempt`);
      p.settled(m, delivery);
    }
    assert.deepEqual(
      t.handled.map((h) => h.id),
      ['m-1', 'm-2', 'm-3', 'm-4', 'm-5', 'm-6'],
      'each message handled once, in order',
    );
    assert.ok(t.dropped.length >= 2, `reused sockets were closed under it: ${t.dropped.length}`);
    assert.deepEqual(
      lines.filter((l) => l.type === 'failed' || l.type === 'warning'),
      [],
      'no failed line, no target-down',
    );
    assert.deepEqual(p.counts, { delivered: 6, failed: 0, rejected: 0 });
  });

  test('the target closes idle connections (its keep-alive timeout) between messages: the next one goes on a new connection', async () => {
    const t = await target(() => ({ status: 200 }));
    t.server.keepAliveTimeout = 50;
    const { reporter, lines } = recording();
    const d = deliverer(t.url, reporter);
    assert.deepEqual(await d.attempt(message('m-1'), never()), { ok: true });
    await sleep(300); // the target has closed it
    assert.deepEqual(await d.attempt(message('m-2'), never()), { ok: true });
    assert.equal(t.connections(), 2);
    assert.deepEqual(
      t.handled.map((h) => h.id),
      ['m-1', 'm-2'],
    );
    assert.deepEqual(lines, []);
  });

  test('a target that resets every connection: a failed attempt (connection reset) after one new connection at most, the outage said once', async () => {
    let down = false;
    const t = await target(() => (down ? 'drop' : { status: 200 }));
    const { reporter, lines } = recording();
    const d = deliverer(t.url, reporter);
    assert.deepEqual(await d.attempt(message('m-1'), never()), { ok: true }); // a socket kept alive
    down = true;
    const before = t.dropped.length;
    assert.deepEqual(await d.attempt(message('m-2'), never()), { ok: false, reason: 'connection reset' });
    assert.equal(t.dropped.length - before, 2, 'the reused socket, then one new connection');
    assert.deepEqual(await d.attempt(message('m-3'), never()), { ok: false, reason: 'connection reset' });
    assert.equal(t.dropped.length - before, 3, 'a new connection fails as before: no second try');

    const p = pipeline(d, reporter);
    const delivery = p.deliver(message('m-4'));
    while (p.counts.failed < 2) await sleep(10);
    down = false;
    assert.deepEqual(await delivery, { settle: 'ack', attempts: 3 });
    assert.deepEqual(
      lines.filter((l) => l.type === 'warning').map((l) => (l.type === 'warning' ? l.code : '')),
      ['target-down'],
    );
    assert.equal(t.handled.filter((h) => h.id === 'm-4').length, 1, 'delivered once');
  });

  test('deliveries side by side through a small pool: every answer counts for its own message', async () => {
    const t = await target((r) => ({
      status: Number(r.id.split('-')[1]) % 2 === 0 ? 200 : 500,
      delayMs: Math.floor(Math.random() * 15),
    }));
    const { reporter } = recording();
    const d = deliverer(t.url, reporter, { maxSockets: 3 });
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => d.attempt(message(`m-${i}`), never())),
    );
    assert.deepEqual(
      results.map((r) => (r.ok ? 200 : r.reason)),
      Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? 200 : 'HTTP 500')),
    );
    assert.ok(t.connections() <= 3, `the pool stays bounded: ${t.connections()} connections`);
    assert.equal(t.handled.length, 60);
  });

  test('a timed-out request takes its socket with it: its late answer is never the next message’s', async () => {
    const t = await target((r) => (r.id === 'slow' ? { status: 200, delayMs: 300 } : { status: 503 }));
    const { reporter } = recording();
    const d = deliverer(t.url, reporter, { maxSockets: 1, timeoutMs: 100 });
    const slow = await d.attempt(message('slow'), never());
    assert.equal(slow.ok, false);
    assert.deepEqual(await d.attempt(message('next'), never()), { ok: false, reason: 'HTTP 503' });
    await sleep(400); // the slow answer would have come by now
    assert.deepEqual(await d.attempt(message('last'), never()), { ok: false, reason: 'HTTP 503' });
  });

  test('a handler slower than the idle-socket timeout (a breakpoint) is waited for, and its answer counts', async () => {
    const t = await target(() => ({ status: 200, delayMs: 1_500 }));
    const { reporter } = recording();
    const d = deliverer(t.url, reporter);
    assert.deepEqual(await d.attempt(message('m-1'), never()), { ok: true });
    assert.equal(t.handled.length, 1);
  });

  test('an answer whose body never ends does not hold the pool: the next message is delivered', async () => {
    const t = await target((r) => (r.id === 'm-1' ? 'endless' : { status: 200 }));
    const { reporter } = recording();
    const d = deliverer(t.url, reporter, { maxSockets: 1, bodyDrainMs: 100 });
    assert.deepEqual(await d.attempt(message('m-1'), never()), { ok: true });
    assert.deepEqual(await d.attempt(message('m-2'), never()), { ok: true });
    assert.deepEqual(
      t.handled.map((h) => h.id),
      ['m-1', 'm-2'],
    );
  });

  test('close() leaves no connection open', async () => {
    const t = await target(() => ({ status: 200 }));
    const { reporter } = recording();
    const d = deliverer(t.url, reporter);
    await Promise.all([d.attempt(message('m-1'), never()), d.attempt(message('m-2'), never())]);
    assert.ok(t.open() > 0);
    await d.close();
    while (t.open() > 0) await sleep(10);
  });
});
