// An operator's retry annotation (queuesplit.dev/retry) is removed only once the retry has been
// acted on. The cluster suite's agent-start-refused test met it: the retry's roll of the
// queue-agent Deployment hit a 409 Conflict (the deployment controller had just updated it), the
// pass failed after the annotation was already gone, and the split stayed Degraded with nothing
// left to retry it. The fakes stand for the API only in the two calls the retry makes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubernetesObjectNames } from '../../../core/names';
import { RETRY_ANNOTATION } from '../../../core/state/operatorRetry';
import type { AgentObjects } from '../../../agent/controller/agentObjects';
import { PhaseProgress } from '../../../agent/controller/phaseProgress';
import { SplitEvents } from '../../../agent/controller/splitEvents';
import type { Workload, Workloads } from '../../../agent/controller/workloads';
import { silentLogger } from '../../../agent/log';
import { at } from '../core/splitFixtures';

function conflict(): Error {
  return Object.assign(
    new Error('Operation cannot be fulfilled on deployments.apps: the object has been modified'),
    {
      code: 409,
    },
  );
}

function harness(rollFails: number) {
  const annotations = new Map<string, string>([[RETRY_ANNOTATION, 'now']]);
  let rolls = 0;
  const workloads = {
    removeAnnotation: (_kind: string, _ns: string, _name: string, key: string) => {
      annotations.delete(key);
      return Promise.resolve();
    },
  } as unknown as Workloads;
  const agents = {
    trouble: () => Promise.resolve({ permanent: true, cause: 'the cluster refused the queue-agent pod' }),
    ensure: () => (rolls++ < rollFails ? Promise.reject(conflict()) : Promise.resolve()),
  } as unknown as AgentObjects;
  const events = new SplitEvents(
    { namespace: 'team', kind: 'Deployment', name: 'refused' },
    { stepTimeoutMs: 120_000, agentStartTimeoutMs: 45_000 },
    { workloads, agents },
    silentLogger,
    new PhaseProgress(),
    new Map(),
    new Set(),
  );
  const workload = () =>
    ({ metadata: { name: 'refused', annotations: Object.fromEntries(annotations) } }) as unknown as Workload;
  return { events, workload, annotations };
}

test('a retry whose queue-agent roll meets a conflict stays asked for, and is acted on at the next pass', async () => {
  const { events, workload, annotations } = harness(1);
  const degraded = at('DEGRADED');
  const names = {} as KubernetesObjectNames;
  await assert.rejects(events.operatorEvents(degraded, workload(), names, []), /409|modified/);
  assert.equal(annotations.get(RETRY_ANNOTATION), 'now', 'the annotation is kept for the next pass');
  assert.deepEqual(await events.operatorEvents(degraded, workload(), names, []), [
    { type: 'retryRequested' },
  ]);
  assert.equal(annotations.get(RETRY_ANNOTATION), undefined, 'removed once the retry was acted on');
  assert.deepEqual(await events.operatorEvents(degraded, workload(), names, []), [], 'and acted on once');
});
