// Why a queue-agent is not running ready, as the coordinator reads it during the agent's steps:
// which causes fail the step at once (waiting will not help) and which only after the agent
// start timeout, and that each names the cause and the safe next action.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { agentTrouble, type AgentPodView } from '../../../agent/controller/podHealth';

function pod(status: Partial<V1ContainerStatus>, ready = false): V1Pod {
  return {
    metadata: { name: 'qs-agent-x-1', namespace: 'team' },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: [{ name: 'agent', image: 'i', imageID: '', ready, restartCount: 0, ...status }],
    },
  };
}

const view = (pods: V1Pod[], extra: Partial<AgentPodView> = {}): AgentPodView => ({
  conditions: [],
  pods,
  warnings: new Map(),
  ...extra,
});

test('a ready agent is no trouble', () => {
  assert.equal(agentTrouble(view([pod({ state: { running: {} } }, true)])), undefined);
});

test('an image that cannot be pulled fails at once, naming the event and --agent-image', () => {
  const t = agentTrouble(
    view([pod({ state: { waiting: { reason: 'ErrImagePull' } } })], {
      warnings: new Map([['qs-agent-x-1', 'Failed: Failed to pull image "q/a:1": not found']]),
    }),
  );
  assert.equal(t?.permanent, true);
  assert.match(t?.cause ?? '', /ErrImagePull; last event: Failed: Failed to pull image "q\/a:1"/);
  assert.match(t?.cause ?? '', /--agent-image/);
});

test('a refused pod (no pod, ReplicaFailure) fails at once with the admission message', () => {
  const t = agentTrouble(
    view([], {
      conditions: [
        { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'violates PodSecurity' },
      ],
    }),
  );
  assert.equal(t?.permanent, true);
  assert.match(t?.cause ?? '', /refused the queue-agent pod \(FailedCreate: violates PodSecurity\)/);
});

test('a crash loop and a failing readiness probe wait for the start timeout, naming the logs', () => {
  const crash = agentTrouble(
    view([
      pod({
        restartCount: 4,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: { terminated: { exitCode: 1 } },
      }),
    ]),
  );
  assert.equal(crash?.permanent, false);
  assert.match(
    crash?.cause ?? '',
    /keeps crashing \(4 restarts, last exit code 1\).*logs qs-agent-x-1 --previous/,
  );
  const unready = agentTrouble(
    view([pod({ state: { running: {} } })], {
      warnings: new Map([
        ['qs-agent-x-1', 'Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 503'],
      ]),
    }),
  );
  assert.equal(unready?.permanent, false);
  assert.match(unready?.cause ?? '', /does not pass its readiness probe.*statuscode: 503/);
  assert.equal(agentTrouble(view([]))?.permanent, false, 'no pod yet, nothing refused: wait');
});

test('a crash-looping agent seen in the second it runs again is told as crashing, not as unready', () => {
  // The kubelet restarts a crashing container at once at first: at the start timeout the
  // container may be running (not ready) between two crashes. CI met exactly that moment.
  const t = agentTrouble(
    view([
      pod({
        restartCount: 3,
        state: { running: { startedAt: new Date() } },
        lastState: { terminated: { exitCode: 1, reason: 'Error' } },
      }),
    ]),
  );
  assert.equal(t?.permanent, false);
  assert.match(
    t?.cause ?? '',
    /keeps crashing \(3 restarts, last exit code 1 \(Error\)\).*logs qs-agent-x-1 --previous/,
  );
});
