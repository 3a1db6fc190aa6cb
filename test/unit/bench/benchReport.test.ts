// The bench report's renderer (test/bench/report/render.ts) on fixed results: the numbers and
// ratios each bench reported appear in the page, and a bench with no result says "not measured".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ratiosOf, renderReport, type BenchJson } from '../../bench/report/render';

const rabbit: BenchJson = {
  bench: 'rabbitmq-engine',
  runs: 5,
  ratio: 0.822,
  rows: [
    { sourceType: 'classic', engineMsgsPerSec: 5834, rawMsgsPerSec: 7098, ratio: 0.822 },
    { sourceType: 'quorum', engineMsgsPerSec: 8775, rawMsgsPerSec: 9614, ratio: 0.913 },
  ],
  loadAverage: { start: [7.64, 4.15, 3.14], end: [9.82, 5, 3.45] },
};
const routes: BenchJson = {
  bench: 'rabbitmq-routes',
  rows: [
    {
      routes: 1,
      msgsPerSec: 3916,
      ratio: 1,
      matchNsPerMessage: 222,
      headersExchangeMsgsPerSec: 9000,
      headersExchangeRatio: 1,
    },
    {
      routes: 1000,
      msgsPerSec: 954,
      ratio: 0.244,
      matchNsPerMessage: 473,
      headersExchangeMsgsPerSec: 1200,
      headersExchangeRatio: 0.133,
    },
  ],
  agentMemory: [{ routes: 1000, activeMiB: 400.1, peakMiB: 499.2 }],
};
const session: BenchJson = {
  bench: 'session-stream',
  ratio: 0.87,
  direct: { latencyPercentilesMs: { p50: 4, p99: 17 } },
  stream: { latencyPercentilesMs: { p50: 6, p99: 23 } },
};

test('the report shows each bench’s numbers and ratios, and “not measured” for a bench with no result', () => {
  const html = renderReport(
    new Map([rabbit, routes, session].map((r) => [r.bench, r])),
    '2026-12-06T09:00:00.000Z',
  );
  // Ratios against the baselines, per source type and per route count.
  for (const text of ['0.82', '0.91', '0.24', '0.87', 'engine / raw amqplib', 'msg/s vs 1 route'])
    assert.ok(html.includes(text), `the page shows ${text}`);
  // Throughput vs routes, match cost, the broker alone, the agent's memory against 150 MB.
  for (const text of [
    '3,916 msg/s',
    '954 msg/s (0.24 of 1 route)',
    '473 ns/msg',
    '1,200 msg/s (0.13)',
    '400 MiB',
    '150 MB',
  ])
    assert.ok(html.includes(text), `the page shows ${text}`);
  // The latency distribution of both paths.
  for (const text of ['p50 direct', 'p99 stream', '23 ms'])
    assert.ok(html.includes(text), `the page shows ${text}`);
  // The load the bench ran under.
  assert.ok(html.includes('load average 7.64 4.15 3.14 → 9.82 5 3.45'));
  // Benches with no result, and the lifecycle (no split-path result in this set).
  assert.match(
    html,
    /<h3>kafka-engine<\/h3><p class="missing">Not measured: no bench-results\/kafka-engine\.json/,
  );
  assert.match(html, /id="lifecycle"><h2>Lifecycle phases<\/h2><p class="missing">Not measured: yet/);
  assert.ok(!html.includes('NaN') && !html.includes('undefined'), 'no missing number leaks into the page');
});

test('the report without any result says "not measured" in every section', () => {
  const html = renderReport(new Map(), '2026-12-06T09:00:00.000Z');
  for (const id of ['routes', 'latency', 'lifecycle'])
    assert.match(html, new RegExp(`id="${id}"><h2>[^<]*</h2><p class="missing">Not measured`), id);
  assert.equal((html.match(/Not measured/g) ?? []).length, 3 + 11);
});

test('ratios: better-is-lower for costs, and an unknown bench’s own ratio fields', () => {
  assert.deepEqual(
    ratiosOf({ bench: 'ui-redraw', afterVsBefore: 0.7 }).map((r) => [r.value, r.better]),
    [[0.7, 'lower']],
  );
  assert.deepEqual(
    ratiosOf({ bench: 'something-new', ratio: 1.2, rows: [{ label: 'x', ratio: 0.5 }] }).map((r) => [
      r.label,
      r.value,
    ]),
    [
      ['something-new', 1.2],
      ['x', 0.5],
    ],
  );
});

test('the split-path bench’s phases are drawn as one bar chart per broker', () => {
  const splitPath: BenchJson = {
    bench: 'split-path',
    lifecycle: {
      rabbitmq: [
        { phase: 'PREPARING', ms: 1934 },
        { phase: 'REDIRECTING_APP', ms: 4833 },
      ],
      kafka: [{ phase: 'QUIESCING_APP', ms: 4079 }],
    },
    latency: [],
  };
  const html = renderReport(new Map([['split-path', splitPath]]), '2026-12-06T09:00:00.000Z');
  const lifecycle = html.slice(
    html.indexOf('id="lifecycle"'),
    html.indexOf('</section>', html.indexOf('id="lifecycle"')),
  );
  for (const text of [
    '<h3>rabbitmq</h3>',
    '<h3>kafka</h3>',
    'REDIRECTING_APP',
    '4.8 s',
    'QUIESCING_APP',
    '4.1 s',
  ])
    assert.ok(lifecycle.includes(text), `the lifecycle section shows ${text}`);
  assert.ok(!lifecycle.includes('Not measured'));
});
