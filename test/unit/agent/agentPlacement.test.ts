// The controller's queue-agent placement flags: parsed with errors that name the flag and the
// fix, and carried into every queue-agent pod (and into what makes the controller replace an
// agent Deployment whose placement changed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queueAgentDeployment } from '../../../agent/controller/agentDeployment';
import { parseNodeSelector, parseTolerations } from '../../../agent/controller/placementFlags';
import { kubernetesObjectNames } from '../../../core/names';

test('--agent-node-selector takes comma-separated label pairs', () => {
  assert.deepEqual(parseNodeSelector('pool=agents,topology.kubernetes.io/zone=eu-1a'), {
    ok: true,
    value: { pool: 'agents', 'topology.kubernetes.io/zone': 'eu-1a' },
  });
  for (const bad of ['pool', '=x', 'pool=a b', 'a=1,a=2']) {
    const r = parseNodeSelector(bad);
    assert.ok(!r.ok, bad);
    assert.match(r.error, /^--agent-node-selector: .*(e\.g\.|once)/, bad);
  }
});

test('--agent-tolerations takes key[=value]:Effect, a key alone tolerating any value', () => {
  assert.deepEqual(parseTolerations('dedicated=agents:NoSchedule,spot:NoExecute'), {
    ok: true,
    value: [
      { key: 'dedicated', operator: 'Equal', value: 'agents', effect: 'NoSchedule' },
      { key: 'spot', operator: 'Exists', effect: 'NoExecute' },
    ],
  });
  for (const bad of ['dedicated=agents', 'dedicated=agents:Never', ':NoSchedule']) {
    const r = parseTolerations(bad);
    assert.ok(!r.ok, bad);
    assert.match(
      r.error,
      /^--agent-tolerations: .*Effect one of NoSchedule, PreferNoSchedule, NoExecute/,
      bad,
    );
  }
});

test('the placement lands in the queue-agent pod spec, and none without flags', () => {
  const names = kubernetesObjectNames({ installId: 'i', workloadUid: 'u', workloadName: 'shop' });
  const placement = {
    nodeSelector: { pool: 'agents' },
    tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
  };
  const placed = queueAgentDeployment(
    { image: 'r.example/a:1', controllerNamespace: 'qs-system', metricsPort: 9090, placement },
    'ns',
    names,
    {},
    [],
  );
  assert.deepEqual(placed.spec?.template.spec?.nodeSelector, placement.nodeSelector);
  assert.deepEqual(placed.spec?.template.spec?.tolerations, placement.tolerations);
  const plain = queueAgentDeployment(
    { image: 'r.example/a:1', controllerNamespace: 'qs-system', metricsPort: 9090 },
    'ns',
    names,
    {},
    [],
  );
  assert.equal(plain.spec?.template.spec?.nodeSelector, undefined);
  assert.equal(plain.spec?.template.spec?.tolerations, undefined);
});
