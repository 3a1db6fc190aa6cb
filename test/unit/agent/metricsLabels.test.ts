// Metrics labels never carry route ids, filter keys or header values (issue: filters beyond
// equality): the label names are a fixed set and the destination label has two values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentMetrics } from '../../../agent/queueAgent/metrics';

test('queue-agent metrics use only fixed label names; destination is app or session', async () => {
  const metrics = new AgentMetrics();
  metrics.observeLag('orders', { app: 1, sessions: 2 });
  metrics.frameRefused('bad-frame');
  const text = await metrics.registry.metrics();
  const allowed = new Set(['queue', 'destination', 'phase', 'step', 'code']);
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    if (!metric.name.startsWith('queuesplit_')) continue;
    for (const value of metric.values) {
      for (const label of Object.keys(value.labels))
        assert.ok(allowed.has(label), `${metric.name} has label ${label}`);
      const destination = value.labels.destination;
      if (destination !== undefined)
        assert.ok(['app', 'session'].includes(String(destination)), String(destination));
    }
  }
  assert.match(text, /queuesplit_shadow_lag_messages\{queue="orders",destination="session"\} 2/);
});
