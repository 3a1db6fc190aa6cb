// A pod with the queue-agent's labels is taken for it only when its Deployment runs it
// (sidecar/agentPod.ts): controlled by one of its ReplicaSets, its ServiceAccount, its image.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { notTheAgent } from '../../../sidecar/agentPod';

const deployment: V1Deployment = {
  metadata: { name: 'qs-agent-shop-1', labels: { 'queuesplit.dev/component': 'queue-agent' } },
  spec: {
    selector: {},
    template: {
      spec: {
        serviceAccountName: 'qs-sa-shop-1',
        containers: [{ name: 'agent', image: 'queuesplit/agent:1' }],
      },
    },
  },
};

const agentPod = (): V1Pod => ({
  metadata: {
    name: 'qs-agent-shop-1-abc12-xyz',
    labels: { 'queuesplit.dev/agent': 'qs-agent-shop-1', 'pod-template-hash': 'abc12' },
    ownerReferences: [
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: 'qs-agent-shop-1-abc12',
        uid: 'u',
        controller: true,
      },
    ],
  },
  spec: { serviceAccountName: 'qs-sa-shop-1', containers: [{ name: 'agent', image: 'queuesplit/agent:1' }] },
});

test("the queue-agent's own pod passes", () => {
  assert.equal(notTheAgent(agentPod(), deployment), undefined);
});

test('a look-alike is named with why', () => {
  const cases: [string, (p: V1Pod) => void, RegExp][] = [
    [
      'no controller',
      (p) => (p.metadata!.ownerReferences = []),
      /not controlled by a ReplicaSet of Deployment qs-agent-shop-1/,
    ],
    [
      "another Deployment's ReplicaSet",
      (p) => (p.metadata!.ownerReferences![0]!.name = 'miner-abc12'),
      /not controlled by a ReplicaSet/,
    ],
    [
      'another ServiceAccount',
      (p) => (p.spec!.serviceAccountName = 'default'),
      /runs as ServiceAccount default, not qs-sa-shop-1/,
    ],
    ['another image', (p) => (p.spec!.containers[0]!.image = 'evil:1'), /runs image evil:1/],
    [
      'no agent label',
      (p) => delete p.metadata!.labels!['queuesplit.dev/agent'],
      /no queuesplit.dev\/agent label/,
    ],
  ];
  for (const [what, change, why] of cases) {
    const pod = agentPod();
    change(pod);
    assert.match(notTheAgent(pod, deployment) ?? 'passed', why, what);
  }
  assert.match(notTheAgent(agentPod(), undefined) ?? '', /no queue-agent Deployment qs-agent-shop-1 exists/);
});
