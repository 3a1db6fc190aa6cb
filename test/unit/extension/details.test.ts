// "Show Split Details": the view model a person reads (phase, what it waits on, the next action
// as a button, routes, counts, events) and the webview's HTML (strict CSP, everything escaped,
// no teammate's filter values, no message headers or bodies); the throttle that coalesces updates.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SidecarMessage } from '../../../core/sidecarProtocol';
import {
  detailsModel,
  escapeHtml,
  relativeTime,
  renderDetailsBody,
  renderDetailsHtml,
  type DetailsInput,
} from '../../../extension/model/details';
import { initialSession, reduceSession, type SessionView } from '../../../extension/model/sidecarView';
import { Throttle, type Clock } from '../../../extension/throttle';
import { split, workload } from './fixtures';

const NOW = Date.parse('2030-01-01T00:01:00Z');
const T = '2030-01-01T00:00:00Z';
const ref = { name: 'qs-split-alice-orders', namespace: 'team-a', routeId: 'abcdefghijklmnop' };

function input(over: Partial<DetailsInput> = {}): DetailsInput {
  return {
    name: 'qs-split-alice-orders',
    namespace: 'team-a',
    context: 'dev',
    mine: true,
    owner: 'alice',
    events: { state: 'listed', events: [] },
    now: NOW,
    ...over,
  };
}

function session(messages: SidecarMessage[]): SessionView {
  return messages.reduce(reduceSession, initialSession('http'));
}

const ready: SidecarMessage = {
  type: 'ready',
  time: T,
  mode: 'http',
  split: ref,
  queues: [
    { name: 'orders', provider: 'rabbitmq', shadow: 'qs-rses-x', deliversTo: 'http://127.0.0.1:8080/' },
  ],
  env: {},
  secretEnv: [],
};

const page = (i: DetailsInput) =>
  renderDetailsHtml(detailsModel(i), { cspSource: 'vscode-resource:', nonce: 'NONCE123', styleUri: 'x.css' });

/** The page as text a person reads (tags dropped, entities decoded). */
function text(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)))
    .replace(/\s+/g, ' ');
}

describe('split details view model', () => {
  test('my Active split: phase, routes with counts, the next action is a test message, Stop offered', () => {
    const s = split({
      phase: 'Active',
      queueStatus: [{ name: 'orders', phase: 'Active', delivered: 7, lag: 1, sourceBacklog: 40 }],
      delivered: 7,
      lag: 1,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'RouteActive',
          message: 'Matching messages reach your session shadow.',
        },
      ],
    });
    const view = session([
      ready,
      {
        type: 'delivered',
        time: T,
        queue: 'orders',
        messageId: 'm1',
        attempts: 1,
        counts: { delivered: 5, failed: 2, rejected: 1 },
      },
    ]);
    const model = detailsModel(input({ split: s, session: view, workload: workload() }));
    assert.equal(model.phase.text, 'Active');
    assert.equal(model.phase.tone, 'ok');
    assert.equal(model.heading, 'Your split of orders-app');
    assert.equal(model.title, 'Split: orders-app [orders]');
    assert.equal(model.waitingOn, undefined, 'an Active split waits on nothing');
    assert.match(model.next?.text ?? '', /reach you: http:\/\/127\.0\.0\.1:8080\/\./);
    assert.deepEqual(
      model.actions.map((a) => [a.id, a.primary]),
      [
        ['sendTest', true],
        ['stop', false],
        ['logs', false],
        ['refresh', false],
      ],
    );
    assert.deepEqual(model.routes, [
      {
        queue: 'orders',
        source: 'RabbitMQ queue orders-src',
        phase: 'Active',
        tone: 'ok',
        shadow: 'qs-rses-x',
        deliversTo: 'http://127.0.0.1:8080/',
        routed: 7,
        lag: 1,
        sourceBacklog: 40,
        handed: 5,
        failed: 2,
        rejected: 1,
      },
    ]);
    assert.deepEqual(
      model.counts.map((c) => `${c.label}: ${c.value}`),
      [
        'Routed to this split: 7',
        'Not yet consumed (lag): 1',
        'Handed to your process: 5',
        'Failed attempts: 2',
        'Rejected: 1',
      ],
    );
    assert.match(
      text(renderDetailsBody(model)),
      /Waiting in the source \(the app's lag\) 40/,
      "what the split adds to the app's lag is shown beside the route",
    );
    const filter = model.facts.find((f) => f.label === 'Filter');
    assert.equal(filter?.value, 'x-queue-split-user=alice', 'my own filter, with its value');
    assert.equal(
      model.facts.find((f) => f.label === 'Lease')?.value,
      'renewed 1 min ago; drains 60 s after the last renewal',
    );
  });

  test("waiting: the controller's words, and nothing to press but Stop", () => {
    const s = split({
      phase: 'Preparing',
      conditions: [
        { type: 'Ready', status: 'False', reason: 'InProgress', message: 'waiting for 2 app pods to stop' },
      ],
    });
    const model = detailsModel(input({ split: s }));
    assert.equal(model.phase.tone, 'progress');
    assert.equal(model.waitingOn, 'waiting for 2 app pods to stop');
    assert.match(model.next?.text ?? '', /Nothing to do yet/);
    assert.equal(model.next?.action, undefined);
    assert.deepEqual(
      model.actions.map((a) => a.id),
      ['stop', 'logs', 'refresh'],
    );
  });

  test('a blocked message: Retry Now is the next action, Reject… beside it; the row says which message', () => {
    const s = split({ phase: 'Active' });
    const view = session([
      ready,
      {
        type: 'failed',
        time: T,
        queue: 'orders',
        messageId: '0-5',
        attempt: 8,
        reason: 'HTTP 500',
        retryInMs: 1000,
        blockedSince: T,
        counts: { delivered: 1, failed: 8 },
      },
    ]);
    const model = detailsModel(input({ split: s, session: view }));
    assert.equal(model.next?.action?.id, 'retry');
    assert.match(model.next?.text ?? '', /Message 0-5 of orders keeps failing \(HTTP 500, attempt 8\)/);
    assert.deepEqual(
      model.actions.map((a) => a.id),
      ['retry', 'reject', 'stop', 'logs', 'refresh'],
    );
    assert.equal(model.routes[0]?.blocked, 'blocked on message 0-5: HTTP 500, attempt 8');
    assert.equal(model.phase.tone, 'warning');
  });

  test('a sidecar that stopped: its code in the extension’s words, and the log is the next thing to read', () => {
    const view = session([
      ready,
      {
        type: 'error',
        time: T,
        code: 'kube-unreachable',
        message: 'The API server stopped answering.',
        suggestedAction: 'Check your VPN.',
      },
    ]);
    const model = detailsModel(input({ split: split({ phase: 'Active' }), session: view }));
    assert.equal(model.next?.action?.id, 'logs');
    // The code's headline (through l10n), the sidecar's own sentence marked as its, the action.
    const words =
      'The cluster does not answer. (The sidecar: The API server stopped answering.) Check that the cluster runs and that this machine reaches it (VPN, proxy), then start the split again.';
    assert.ok((model.next?.text ?? '').includes(`sidecar for it stopped: ${words}`), model.next?.text);
    assert.equal(model.sidecar?.error, words);
  });

  test("Degraded: the next action copies the operator's retry command", () => {
    const s = split({
      phase: 'Degraded',
      conditions: [
        { type: 'Ready', status: 'False', reason: 'Degraded', message: 'a drain could not be proven.' },
      ],
      nextAction: 'Nothing was lost. Ask an operator to retry.',
    });
    const model = detailsModel(input({ split: s }));
    assert.equal(model.next?.action?.id, 'copyRetry');
    assert.match(
      model.next?.action?.title ?? '',
      /kubectl -n team-a annotate deployment\/orders-app queuesplit\.dev\/retry=now/,
    );
    assert.equal(model.next?.text, 'Nothing was lost. Ask an operator to retry.');
    assert.equal(model.waitingOn, 'a drain could not be proven.');
  });

  test('Rejected (mine): delete it and start a corrected one', () => {
    const s = split({
      phase: 'Rejected',
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'SourceNotSplittable',
          message: 'x-foo cannot be reproduced',
        },
      ],
      nextAction: 'Remove x-foo, then start again.',
    });
    const model = detailsModel(input({ split: s }));
    assert.equal(model.phase.tone, 'error');
    assert.deepEqual(model.next, {
      text: 'Remove x-foo, then start again.',
      action: {
        id: 'stop',
        label: 'Delete Split',
        primary: true,
        title: 'Delete this QueueSplit (the controller cleans up)',
      },
    });
    assert.equal(model.actions.filter((a) => a.id === 'stop').length, 1, 'one stop button');
  });

  test("a teammate's split: no Stop, no sidecar, filter values hidden", () => {
    const s = split({ owner: 'bob', phase: 'Active', filter: { 'x-queue-split-user': 'bob-secret-value' } });
    const model = detailsModel(input({ split: s, mine: false }));
    assert.equal(model.heading, "bob's split of orders-app");
    assert.deepEqual(
      model.actions.map((a) => a.id),
      ['logs', 'refresh'],
    );
    assert.equal(model.facts.find((f) => f.label === 'Filter')?.value, 'x-queue-split-user=…');
    assert.match(model.notes.join(' '), /Filter values of other owners are hidden/);
    assert.ok(!page(input({ split: s, mine: false })).includes('bob-secret-value'));
  });

  test("other splits of the workload: mine with values, teammates' masked", () => {
    const mine = split({ phase: 'Active' });
    const bob = split({
      name: 'qs-bob',
      owner: 'bob',
      phase: 'Preparing',
      filter: { tenant: 'bob-private' },
    });
    const model = detailsModel(input({ split: mine, others: [mine, bob] }));
    assert.deepEqual(model.others, [
      { owner: 'bob', queues: 'orders', phase: 'Preparing', tone: 'progress', filter: 'tenant=…' },
    ]);
  });

  test('a split that is gone says so and offers to start one', () => {
    const model = detailsModel(input());
    assert.equal(model.phase.text, 'Gone');
    assert.match(model.next?.text ?? '', /This split is gone/);
    assert.equal(model.next?.action?.id, 'startSplit');
    assert.deepEqual(model.routes, []);
  });

  test('a read error: the reason, and Refresh', () => {
    const model = detailsModel(
      input({ readError: 'Cannot reach the Kubernetes API of context "dev" (ECONNREFUSED).' }),
    );
    assert.equal(model.phase.text, 'Unknown');
    assert.equal(model.next?.action?.id, 'refresh');
    assert.match(model.next?.text ?? '', /ECONNREFUSED/);
  });

  test('events: listed newest first as relative times; unavailable says why and the view goes on', () => {
    const listed = detailsModel(
      input({
        split: split({ phase: 'Active' }),
        events: {
          state: 'listed',
          events: [
            {
              time: '2030-01-01T00:00:30Z',
              type: 'Normal',
              reason: 'Split',
              object: 'Deployment/orders-app',
              message: 'Split: 1 route active.',
            },
          ],
        },
      }),
    );
    assert.deepEqual(listed.events, {
      state: 'listed',
      events: [
        {
          time: '30 s ago',
          type: 'Normal',
          reason: 'Split',
          object: 'Deployment/orders-app',
          message: 'Split: 1 route active.',
        },
      ],
    });
    const html = page(
      input({
        split: split({ phase: 'Active' }),
        events: { state: 'unavailable', reason: 'your credentials may not list events in namespace team-a.' },
      }),
    );
    assert.match(
      text(html),
      /Recent events Events unavailable: your credentials may not list events in namespace team-a\./,
    );
    assert.match(text(html), /Routes orders Active/, 'the rest of the view is there');
  });

  test('env delivery: the env for my process, secret names only', () => {
    let view = initialSession('env');
    view = reduceSession(view, {
      type: 'ready',
      time: T,
      mode: 'env',
      split: ref,
      queues: [{ name: 'orders', provider: 'rabbitmq', shadow: 'qs-rses-x', deliversTo: 'env' }],
      env: { SOURCE_QUEUE: 'qs-rses-x' },
      secretEnv: ['AMQP_URL'],
      envFile: '/tmp/x.env',
    });
    const model = detailsModel(input({ split: split({ phase: 'Active' }), session: view }));
    const facts = Object.fromEntries((model.sidecar?.facts ?? []).map((f) => [f.label, f.value]));
    assert.equal(facts['Env for your process'], 'SOURCE_QUEUE=qs-rses-x');
    assert.equal(facts['Secret env (names)'], 'AMQP_URL — values only in the env file');
    assert.equal(model.routes[0]?.handed, undefined, 'env delivery: the sidecar hands nothing over');
    assert.match(model.next?.text ?? '', /wait in your session shadow, which your process reads/);
  });

  test('relative times', () => {
    assert.equal(relativeTime('2030-01-01T00:00:55Z', NOW), '5 s ago');
    assert.equal(relativeTime('2029-12-31T23:58:00Z', NOW), '3 min ago');
    assert.equal(relativeTime('2029-12-31T21:00:00Z', NOW), '3 h ago');
    assert.equal(relativeTime('2030-01-01T00:01:40Z', NOW), 'in 40 s');
    assert.equal(relativeTime('not a time', NOW), undefined);
  });
});

describe('split details HTML', () => {
  test('strict CSP: nothing remote, the one script carries the nonce, no inline handlers', () => {
    const html = page(input({ split: split({ phase: 'Active' }) }));
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1];
    assert.equal(
      csp,
      'default-src &#39;none&#39;; style-src vscode-resource:; script-src &#39;nonce-NONCE123&#39;',
    );
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
    assert.deepEqual(scripts, [' nonce="NONCE123"']);
    assert.ok(!/\son[a-z]+=/i.test(html), 'no inline event handler attributes');
    assert.ok(!/(src|href)="https?:/i.test(html), 'no remote content');
    assert.match(html, /<link rel="stylesheet" href="x\.css">/);
  });

  test('every value is escaped: names, messages, events, warnings', () => {
    const evil = '<img src=x onerror=alert(1)>"\'&';
    const s = split({
      phase: 'Preparing',
      conditions: [{ type: 'Ready', status: 'False', reason: 'InProgress', message: evil }],
      nextAction: evil,
    });
    const view = session([
      ready,
      { type: 'warning', time: T, code: 'target-down', message: evil, suggestedAction: evil },
    ]);
    const html = page(
      input({
        name: evil,
        context: evil,
        split: s,
        session: view,
        events: {
          state: 'listed',
          events: [{ type: evil, reason: evil, object: evil, message: evil, count: 2 }],
        },
      }),
    );
    assert.ok(!html.includes('<img'), 'no markup from a value');
    assert.ok(!html.includes('onerror=alert(1)>"'), 'no raw quote after a value');
    assert.ok(text(html).includes(evil), 'the text reads as it was');
    assert.equal(escapeHtml(`<a href="x">'&\``), '&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#96;');
  });

  test('totals only for several queues (one route card already says its counts)', () => {
    const one = text(renderDetailsBody(detailsModel(input({ split: split({ phase: 'Active' }) }))));
    assert.ok(!one.includes('Counts'), one);
    const two = split({
      phase: 'Active',
      queues: ['orders', 'kinvoices'],
      queueStatus: [
        { name: 'orders', delivered: 2 },
        { name: 'kinvoices', delivered: 3 },
      ],
      delivered: 5,
    });
    const page2 = text(
      renderDetailsBody(
        detailsModel(input({ split: two, workload: workload('orders-app', ['orders', 'kinvoices']) })),
      ),
    );
    assert.match(
      page2,
      /Routes orders Active RabbitMQ queue orders-src .* Routed 2 kinvoices Active Kafka topic kinvoices-src .* Routed 3 Counts Routed to this split 5 /,
    );
  });

  test('buttons carry their action id only', () => {
    const html = renderDetailsBody(detailsModel(input({ split: split({ phase: 'Active' }) })));
    const buttons = [...html.matchAll(/<button type="button" class="(\w+)" data-action="(\w+)"/g)].map(
      (m) => [m[2], m[1]],
    );
    assert.deepEqual(buttons, [
      ['sendTest', 'primary'],
      ['stop', 'secondary'],
      ['logs', 'secondary'],
      ['refresh', 'secondary'],
    ]);
  });

  test('no message header or body reaches the page, whatever the sidecar said about it', () => {
    // The sidecar's lines carry ids, reasons and counts only; a delivered message's headers and
    // body are never in the SessionView the page is built from. This pins the fields used.
    const view = session([
      ready,
      {
        type: 'failed',
        time: T,
        queue: 'orders',
        messageId: 'id-1',
        attempt: 1,
        reason: 'HTTP 500',
        retryInMs: 10,
        blockedSince: T,
        counts: { delivered: 0, failed: 1 },
      },
    ]);
    const model = detailsModel(input({ split: split({ phase: 'Active' }), session: view }));
    const all = JSON.stringify(model);
    for (const key of ['headers', 'body', 'payload']) assert.ok(!all.includes(`"${key}"`), key);
  });
});

describe('throttle', () => {
  function fakeClock() {
    let now = 0;
    const timers: { at: number; run: () => void; id: number }[] = [];
    let next = 1;
    const clock: Clock = {
      now: () => now,
      setTimeout: (run, ms) => {
        const id = next++;
        timers.push({ at: now + ms, run, id });
        return id;
      },
      clearTimeout: (id) => {
        const i = timers.findIndex((t) => t.id === id);
        if (i >= 0) timers.splice(i, 1);
      },
    };
    const advance = async (ms: number) => {
      const end = now + ms;
      for (;;) {
        for (let i = 0; i < 5; i++) await Promise.resolve();
        timers.sort((a, b) => a.at - b.at);
        const due = timers[0];
        if (due === undefined || due.at > end) break;
        timers.shift();
        now = due.at;
        due.run();
        for (let i = 0; i < 5; i++) await Promise.resolve();
      }
      now = end;
    };
    return { clock, advance };
  }

  test('a burst runs once at once, then at most once per interval, ending on the latest', async () => {
    const { clock, advance } = fakeClock();
    const runs: number[] = [];
    const throttle = new Throttle(
      async () => {
        runs.push(clock.now());
      },
      300,
      undefined,
      clock,
    );
    for (let i = 0; i < 100; i++) throttle.schedule();
    await advance(0);
    assert.deepEqual(runs, [0]);
    for (let t = 0; t < 1000; t += 10) {
      throttle.schedule();
      await advance(10);
    }
    // 1 s of changes every 10 ms: runs at 0, 300, 600, 900 (and one more for the last change).
    await advance(1000);
    assert.deepEqual(runs, [0, 300, 600, 900, 1200]);
    throttle.dispose();
    throttle.schedule();
    await advance(1000);
    assert.equal(runs.length, 5, 'nothing after dispose');
  });

  test('never two runs at once: a change during a run runs once after it', async () => {
    const { clock, advance } = fakeClock();
    let running = 0;
    let most = 0;
    let release: () => void = () => undefined;
    let count = 0;
    const throttle = new Throttle(
      () =>
        new Promise<void>((resolve) => {
          running += 1;
          count += 1;
          most = Math.max(most, running);
          release = () => {
            running -= 1;
            resolve();
          };
        }),
      100,
      undefined,
      clock,
    );
    throttle.schedule();
    await advance(0);
    throttle.schedule();
    throttle.schedule();
    await advance(500);
    assert.equal(count, 1, 'waits for the run in progress');
    release();
    await advance(500);
    assert.equal(count, 2, 'then runs once more');
    release();
    assert.equal(most, 1);
  });

  test('a failing run is reported and does not stop later ones', async () => {
    const { clock, advance } = fakeClock();
    const errors: unknown[] = [];
    let n = 0;
    const throttle = new Throttle(
      async () => {
        n += 1;
        if (n === 1) throw new Error('boom');
      },
      50,
      (err) => errors.push(err),
      clock,
    );
    throttle.schedule();
    await advance(0);
    throttle.schedule();
    await advance(100);
    assert.equal(n, 2);
    assert.equal(errors.length, 1);
  });
});
