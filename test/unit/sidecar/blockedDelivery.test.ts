// A handler that keeps failing blocks the developer's route (docs/design.md §8), as pure logic: the
// real QueuePipeline and retry loop around a scripted Deliverer (its attempts' results are the
// only stand-in), the stdin requests that act on the blocked message, and the --reject-after flag.
// The same behaviour against the real brokers and the shipped bundle: test/sidecar/blocked-delivery.test.ts.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import type { ShadowMessage } from '../../../core/shadowMessage';
import type { Delivery } from '../../../sidecar/consumers/types';
import { QueuePipeline, type RejectRules } from '../../../sidecar/delivery/pipeline';
import { Outage, StopSignals, type AttemptResult } from '../../../sidecar/delivery/retry';
import type { Deliverer } from '../../../sidecar/delivery/types';
import { SidecarError } from '../../../laptop/errors';
import { buildOptions, parseRejectAfter, type RawOptions } from '../../../sidecar/options';
import { Reporter } from '../../../sidecar/output';
import { parseSidecarRequest, type SidecarMessage } from '../../../core/sidecarProtocol';

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

/** A destination that answers each attempt as `answer` says (by message id and attempt number). */
function scripted(
  reporter: Reporter,
  answer: (id: string, n: number) => AttemptResult | Promise<AttemptResult>,
) {
  const attempts: { id: string; at: number }[] = [];
  const outage = new Outage(reporter, 'target-down', 'The http target', 'Fix it.');
  const deliverer: Deliverer = {
    describe: () => 'scripted',
    outage: () => outage,
    attempt: (m) => {
      attempts.push({ id: m.id, at: Date.now() });
      return Promise.resolve(answer(m.id, attempts.filter((a) => a.id === m.id).length));
    },
    close: async () => undefined,
  };
  return { deliverer, attempts };
}

const message = (id: string): ShadowMessage => ({
  queue: 'invoices',
  id,
  body: Buffer.from(id),
  time: new Date(),
  headers: [],
  filterHeaders: new Map([['x-queue-split-user', 'alice']]),
  broker: { provider: 'rabbitmq', properties: {}, redelivered: false },
});

const FILTER = { 'x-queue-split-user': 'alice' };
const fail: AttemptResult = { ok: false, reason: 'HTTP 500' };

function pipeline(
  reporter: Reporter,
  deliverer: Deliverer,
  rules: Partial<RejectRules> = {},
  policy = { initialMs: 1_000, maxMs: 30_000 },
) {
  const stop = new StopSignals();
  const p = new QueuePipeline('invoices', FILTER, deliverer, reporter, policy, stop, {
    provider: 'rabbitmq',
    cannotReject: () => undefined,
    ...rules,
  });
  return { pipeline: p, stop };
}

const failedLines = (lines: SidecarMessage[]) =>
  lines.filter((l): l is Extract<SidecarMessage, { type: 'failed' }> => l.type === 'failed');

async function until(what: string, ok: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('a handler that keeps failing blocks the route', () => {
  test('each failed line says since when the message blocks; a retry request ends the backoff wait at once; a reject request gives up on it with no further attempt, and the rejected line says what the broker does with it', async () => {
    const { reporter, lines } = recording();
    const { deliverer, attempts } = scripted(reporter, () => fail);
    const { pipeline: p } = pipeline(reporter, deliverer);
    const delivery = p.deliver(message('bad-1'));
    await until('first failure', () => failedLines(lines).length === 1);
    const first = failedLines(lines)[0]!;
    assert.equal(first.messageId, 'bad-1');
    assert.equal(first.attempt, 1);
    assert.equal(first.reason, 'HTTP 500');
    assert.ok(first.retryInMs >= 800, `a real backoff wait: ${first.retryInMs}`);
    assert.equal(first.rejectAfter, undefined, 'retried for ever by default');
    assert.deepEqual(p.blockedOn(), ['bad-1']);

    const asked = Date.now();
    p.request({ type: 'retry', queue: 'invoices', messageId: 'bad-1' });
    await until('second failure', () => failedLines(lines).length === 2);
    assert.ok(Date.now() - asked < first.retryInMs / 2, 'the retry did not wait out the backoff');
    assert.equal(
      failedLines(lines)[1]!.blockedSince,
      first.blockedSince,
      'one block, from its first failure',
    );
    assert.equal(failedLines(lines)[1]!.attempt, 2);

    p.request({ type: 'reject', queue: 'invoices', messageId: 'bad-1' });
    const result: Delivery = await delivery;
    assert.deepEqual(result, { settle: 'reject', attempts: 2, rejectedBy: 'request', reason: 'HTTP 500' });
    assert.equal(attempts.length, 2, 'no attempt after the reject');
    assert.deepEqual(p.blockedOn(), []);
    p.settled(message('bad-1'), result);
    const rejected = lines.find((l) => l.type === 'rejected');
    assert.ok(rejected?.type === 'rejected');
    assert.equal(rejected.messageId, 'bad-1');
    assert.equal(rejected.queue, 'invoices');
    assert.equal(rejected.attempts, 2);
    assert.equal(rejected.by, 'request');
    assert.match(rejected.message, /at your request after 2 failed attempts/);
    assert.match(rejected.message, /dead-letters it by the queue's dead-letter settings/);
    assert.deepEqual(rejected.counts, { delivered: 0, failed: 2, rejected: 1 });
  });

  test('a request naming a message that is not the blocked one changes nothing and says which one is blocked; a message not failed yet is not blocked', async () => {
    const { reporter, lines } = recording();
    let release: (r: AttemptResult) => void = () => undefined;
    const { deliverer, attempts } = scripted(reporter, (id, n) =>
      id === 'slow' ? new Promise<AttemptResult>((r) => (release = r)) : n < 3 ? fail : { ok: true },
    );
    const { pipeline: p } = pipeline(reporter, deliverer, {}, { initialMs: 250, maxMs: 250 });
    const slow = p.deliver(message('slow'));
    p.request({ type: 'reject', queue: 'invoices', messageId: 'slow' });
    const warnings = () =>
      lines.filter(
        (l): l is Extract<SidecarMessage, { type: 'warning' }> =>
          l.type === 'warning' && l.code === 'request-ignored',
      );
    assert.equal(warnings().length, 1, 'its first attempt has not failed: not blocked');
    assert.match(warnings()[0]!.message, /slow .*not blocked.*Nothing was changed/);
    release({ ok: true });
    assert.deepEqual(await slow, { settle: 'ack', attempts: 1 });

    const bad = p.deliver(message('bad-1'));
    await until('blocked', () => p.blockedOn().length === 1);
    p.request({ type: 'reject', queue: 'invoices', messageId: 'inv-2' });
    p.request({ type: 'retry', queue: 'invoices', messageId: 'inv-2' });
    assert.equal(warnings().length, 3);
    for (const w of warnings().slice(1)) {
      assert.match(w.message, /inv-2/);
      assert.match(w.message, /blocked on bad-1/);
      assert.equal(w.queue, 'invoices');
    }
    assert.deepEqual(await bad, { settle: 'ack', attempts: 3 }, 'still retried until delivered');
    assert.equal(attempts.filter((a) => a.id === 'bad-1').length, 3);
  });

  test('--reject-after 3: rejected when the third attempt fails, no wait after it, failed lines say when', async () => {
    const { reporter, lines } = recording();
    const { deliverer, attempts } = scripted(reporter, () => fail);
    const { pipeline: p } = pipeline(
      reporter,
      deliverer,
      { rejectAfter: 3, provider: 'kafka' },
      { initialMs: 1, maxMs: 5 },
    );
    const result = await p.deliver(message('0-1'));
    assert.deepEqual(result, {
      settle: 'reject',
      attempts: 3,
      rejectedBy: 'reject-after',
      reason: 'HTTP 500',
    });
    assert.equal(attempts.length, 3);
    assert.deepEqual(
      failedLines(lines).map((f) => [f.attempt, f.rejectAfter]),
      [
        [1, 3],
        [2, 3],
      ],
    );
    p.settled(message('0-1'), result);
    const rejected = lines.find((l) => l.type === 'rejected');
    assert.ok(rejected?.type === 'rejected');
    assert.equal(rejected.by, 'reject-after');
    assert.match(
      rejected.message,
      /automatically after 3 failed attempts \(--reject-after 3; last: HTTP 500\)/,
    );
    assert.match(rejected.message, /Kafka has no reject: it is skipped/);
  });

  test('a reject that comes while an attempt is under way takes effect when it fails; one that the attempt delivers is acked, and the request is told', async () => {
    const { reporter, lines } = recording();
    const answers: ((r: AttemptResult) => void)[] = [];
    const { deliverer } = scripted(reporter, () => new Promise<AttemptResult>((r) => answers.push(r)));
    const { pipeline: p } = pipeline(reporter, deliverer, {}, { initialMs: 1, maxMs: 1 });
    const first = p.deliver(message('bad-1'));
    await until('attempt 1', () => answers.length === 1);
    answers[0]!(fail);
    await until('attempt 2 under way', () => answers.length === 2);
    p.request({ type: 'reject', queue: 'invoices', messageId: 'bad-1' });
    answers[1]!(fail);
    assert.deepEqual(await first, {
      settle: 'reject',
      attempts: 2,
      rejectedBy: 'request',
      reason: 'HTTP 500',
    });

    const second = p.deliver(message('bad-2'));
    await until('attempt 1', () => answers.length === 3);
    answers[2]!(fail);
    await until('attempt 2 under way', () => answers.length === 4);
    p.request({ type: 'reject', queue: 'invoices', messageId: 'bad-2' });
    answers[3]!({ ok: true });
    assert.deepEqual(await second, { settle: 'ack', attempts: 2 });
    assert.ok(
      lines.some(
        (l) =>
          l.type === 'warning' && l.code === 'request-ignored' && /delivered it: it is acked/.test(l.message),
      ),
    );
  });

  test('where this session cannot reject (a queue-agent from before rejects): a reject request is refused with the reason, --reject-after is said once not to apply, and the message is retried', async () => {
    const { reporter, lines } = recording();
    const { deliverer } = scripted(reporter, (_id, n) => (n < 4 ? fail : { ok: true }));
    const { pipeline: p } = pipeline(
      reporter,
      deliverer,
      { rejectAfter: 2, cannotReject: () => 'the queue-agent is too old' },
      { initialMs: 50, maxMs: 200 },
    );
    const delivered = p.deliver(message('bad-1'));
    await until('blocked', () => p.blockedOn().length === 1);
    p.request({ type: 'reject', queue: 'invoices', messageId: 'bad-1' });
    assert.deepEqual(
      await delivered,
      { settle: 'ack', attempts: 4 },
      'retried past --reject-after, delivered',
    );
    const said = lines.filter((l) => l.type === 'warning' && l.code === 'request-ignored');
    assert.ok(
      said.some((l) => l.type === 'warning' && /--reject-after 2 does not apply.*too old/.test(l.message)),
    );
    assert.ok(
      said.some(
        (l) =>
          l.type === 'warning' &&
          /Reject of message bad-1 .*ignored: the queue-agent is too old/.test(l.message),
      ),
    );
    await p.deliver(message('bad-2'));
    assert.equal(
      lines.filter((l) => l.type === 'warning' && /--reject-after/.test(l.message)).length,
      1,
      'said once',
    );
  });

  test('stopping ends the wait of a blocked message: it is neither delivered nor rejected', async () => {
    const { reporter } = recording();
    const { deliverer } = scripted(reporter, () => fail);
    const { pipeline: p, stop } = pipeline(reporter, deliverer);
    const delivery = p.deliver(message('bad-1'));
    await until('blocked', () => p.blockedOn().length === 1);
    stop.stop(0);
    await assert.rejects(delivery, (err: Error) => err.name === 'AbortError');
  });
});

describe('stdin requests and the flag', () => {
  test('retry and reject requests name a queue and a message id; anything else is no request', () => {
    assert.deepEqual(parseSidecarRequest('{"type":"retry","queue":"orders","messageId":"0-5"}'), {
      type: 'retry',
      queue: 'orders',
      messageId: '0-5',
    });
    assert.deepEqual(
      parseSidecarRequest(' {"type":"reject","queue":"invoices","messageId":"m-1","extra":1}\r'),
      {
        type: 'reject',
        queue: 'invoices',
        messageId: 'm-1',
      },
    );
    for (const line of [
      '{"type":"reject","queue":"orders"}',
      '{"type":"retry","messageId":"0-5"}',
      '{"type":"reject","queue":"orders","messageId":5}',
      '{"type":"drop","queue":"orders","messageId":"0-5"}',
    ])
      assert.equal(parseSidecarRequest(line), undefined, line);
  });

  test('--reject-after: a positive whole number for http and relay; each problem names the flag and the fix', () => {
    assert.equal(parseRejectAfter('8', 'http'), 8);
    assert.equal(parseRejectAfter(' 1 ', 'relay'), 1);
    const problem = (text: string, mode: 'http' | 'env' = 'http') => {
      try {
        parseRejectAfter(text, mode);
      } catch (err) {
        assert.ok(err instanceof SidecarError);
        assert.equal(err.flag, '--reject-after');
        return `${err.message} | ${err.suggestedAction}`;
      }
      throw new Error(`${text} was accepted`);
    };
    assert.match(
      problem('0'),
      /must be from 1 to 1000000 attempts, not 0.*--reject-after 8.*leave the flag out/,
    );
    assert.match(problem('-3'), /"-3" is not a whole number of attempts/);
    assert.match(problem('2.5'), /"2.5" is not a whole number/);
    assert.match(problem('eight'), /"eight" is not a whole number/);
    assert.match(problem('1000001'), /from 1 to 1000000/);
    assert.match(problem('3', 'env'), /for http and relay delivery.*Leave --reject-after out/);
    const raw: RawOptions = {
      workload: 'orders',
      mode: 'http',
      transport: 'agent',
      target: 'http://127.0.0.1:8080/',
      httpTimeout: 0,
      retryMaxDelay: 30_000,
      leaseSeconds: 60,
      readyTimeout: 300,
      detachTimeout: 300,
      pollInterval: 1000,
      stopGrace: 5,
    };
    assert.equal(buildOptions(raw).rejectAfter, undefined, 'default: never');
    assert.equal(buildOptions({ ...raw, rejectAfter: '8' }).rejectAfter, 8);
  });
});
