// The queue-agent's NetworkPolicy (agent/controller/agentNetworkPolicy.ts): it selects exactly
// the agent's pods, closes ingress by default, and opens only the metrics port to the
// namespaces `--agent-metrics-from` names.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queueAgentDeployment } from '../../../agent/controller/agentDeployment';
import { queueAgentNetworkPolicy } from '../../../agent/controller/agentNetworkPolicy';
import { parseMetricsFrom } from '../../../agent/controller/placementFlags';
import { kubernetesObjectNames } from '../../../core/names';

const names = kubernetesObjectNames({ installId: 'i', workloadUid: 'u', workloadName: 'shop' });
const settings = { image: 'r.example/a:1', controllerNamespace: 'qs-system', metricsPort: 9090 };

test("it selects the agent's pods and no other, and admits no ingress unless told", () => {
  const policy = queueAgentNetworkPolicy(settings, 'team-a', names, {});
  const pod = queueAgentDeployment(settings, 'team-a', names, {}, []).spec!.template.metadata!.labels!;
  const selector = policy.spec!.podSelector!.matchLabels!;
  assert.ok(
    Object.entries(selector).every(([k, v]) => pod[k] === v),
    'the agent pod matches',
  );
  assert.deepEqual(Object.keys(selector), ['queuesplit.dev/agent'], 'one label: only this agent');
  assert.deepEqual(policy.spec!.policyTypes, ['Ingress']);
  assert.deepEqual(policy.spec!.ingress, []);
});

test('--agent-metrics-from opens the metrics port to those namespaces only', () => {
  const from = parseMetricsFrom('kubernetes.io/metadata.name=monitoring');
  assert.ok(from.ok);
  const policy = queueAgentNetworkPolicy({ ...settings, metricsFrom: from.value }, 'team-a', names, {});
  assert.deepEqual(policy.spec!.ingress, [
    {
      _from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
      ports: [{ protocol: 'TCP', port: 9090 }],
    },
  ]);
  const bad = parseMetricsFrom('monitoring');
  assert.ok(!bad.ok);
  assert.match(bad.error, /--agent-metrics-from: "monitoring" is not a label key=value/);
});
