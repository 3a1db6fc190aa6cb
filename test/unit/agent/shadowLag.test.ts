// Shadow lag for the metrics and the status: per route and summed per destination kind, unknown
// (absent) rather than zero when the broker does not answer, and exported without route labels.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LAG_READ_CONCURRENCY, sumLag } from '../../../agent/engine/lag';
import { AgentMetrics } from '../../../agent/queueAgent/metrics';

const shadowsOf = (...names: string[]) => names.map((shadow) => ({ routeId: `r-${shadow}`, shadow }));

test('session lag is per route and the sum over the routes; a shadow the broker cannot report makes its kind unknown', async () => {
  const depth: Record<string, number> = { app: 4, s1: 2, s2: 5 };
  const read = async (shadow: string) => {
    if (shadow === 'broken') throw new Error('management API down');
    return depth[shadow];
  };
  assert.deepEqual(await sumLag(read, 'app', shadowsOf('s1', 's2')), {
    app: 4,
    sessions: 7,
    routes: { 'r-s1': 2, 'r-s2': 5 },
  });
  assert.deepEqual(await sumLag(read, 'app', []), { app: 4, sessions: 0, routes: {} });
  // The route the broker answered for keeps its reading; the sum is unknown.
  assert.deepEqual(await sumLag(read, 'app', shadowsOf('s1', 'broken')), { app: 4, routes: { 'r-s1': 2 } });
  assert.deepEqual(await sumLag(read, 'broken', shadowsOf('s1', 'missing')), { routes: { 'r-s1': 2 } });
});

test('the lag gauge carries queue and destination only, and drops a reading that became unknown', async () => {
  const metrics = new AgentMetrics();
  metrics.observeLag('orders', { app: 3, sessions: 9 });
  let text = await metrics.registry.metrics();
  assert.match(text, /queuesplit_shadow_lag_messages\{queue="orders",destination="app"\} 3/);
  assert.match(text, /queuesplit_shadow_lag_messages\{queue="orders",destination="session"\} 9/);
  metrics.observeLag('orders', { app: 1 });
  text = await metrics.registry.metrics();
  assert.match(text, /queuesplit_shadow_lag_messages\{queue="orders",destination="app"\} 1/);
  assert.doesNotMatch(text, /destination="session"/);
});

test('the source backlog is its own gauge, by queue, present only while the engine copies', async () => {
  const metrics = new AgentMetrics();
  metrics.observeLag('orders', { app: 0, sessions: 0, source: 12 });
  let text = await metrics.registry.metrics();
  assert.match(text, /queuesplit_source_backlog_messages\{queue="orders"\} 12/);
  assert.doesNotMatch(text, /queuesplit_shadow_lag_messages\{[^}]*destination="source"/);
  metrics.observeLag('orders', { app: 0, sessions: 0 }); // stopped copying: the app reads the source
  text = await metrics.registry.metrics();
  assert.doesNotMatch(text, /queuesplit_source_backlog_messages\{/);
});

test('shadows are read a few at a time, not all at once (one connection each at 1,000 routes)', async () => {
  let inFlight = 0;
  let most = 0;
  const read = async () => {
    most = Math.max(most, ++inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    inFlight--;
    return 1;
  };
  const sessions = shadowsOf(...Array.from({ length: 1000 }, (_, k) => `s${k}`));
  const lag = await sumLag(read, 'app', sessions);
  assert.deepEqual([lag.app, lag.sessions, Object.keys(lag.routes ?? {}).length], [1, 1000, 1000]);
  assert.equal(most, LAG_READ_CONCURRENCY);
});
