// Which HorizontalPodAutoscalers a split refuses (agent/controller/autoscalers.ts): only those
// that scale a target up from zero, since every other HPA leaves a target held at zero alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V2HorizontalPodAutoscaler } from '@kubernetes/client-node';
import { autoscalerRefusal, kedaOwned, scaledObjectOf } from '../../../agent/controller/autoscalers';

const hpa = (name: string, minReplicas?: number): V2HorizontalPodAutoscaler => ({
  metadata: { name },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'app' },
    maxReplicas: 5,
    ...(minReplicas === undefined ? {} : { minReplicas }),
  },
});

test('an HPA with minReplicas 1 or more, or unset (the API default 1), is no reason to refuse', () => {
  assert.equal(autoscalerRefusal([]), undefined);
  assert.equal(autoscalerRefusal([hpa('a'), hpa('b', 1), hpa('c', 4)]), undefined);
});

test('an HPA with minReplicas 0 is refused by name, with the fix', () => {
  const refusal = autoscalerRefusal([hpa('fine', 2), hpa('to-zero', 0)]);
  assert.equal(refusal?.reason, 'AutoscalerScalesFromZero');
  assert.match(refusal?.message ?? '', /HorizontalPodAutoscaler to-zero has minReplicas 0/);
  assert.doesNotMatch(refusal?.message ?? '', /fine/);
  assert.match(refusal?.message ?? '', /Set spec\.minReplicas to 1 or more/);
});

test('an HPA KEDA made for a ScaledObject is no refusal, whatever its minReplicas: the split pauses the ScaledObject instead', () => {
  const keda: V2HorizontalPodAutoscaler = {
    ...hpa('keda-hpa-orders', 0),
    metadata: {
      name: 'keda-hpa-orders',
      labels: { 'scaledobject.keda.sh/name': 'orders' },
      ownerReferences: [{ apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject', name: 'orders', uid: 'u' }],
    },
  };
  assert.equal(kedaOwned(keda), true);
  assert.equal(scaledObjectOf(keda), 'orders');
  assert.equal(autoscalerRefusal([keda]), undefined);
  // Known by its label alone too (an HPA whose owner reference a backup/restore dropped).
  const labelled = { ...keda, metadata: { ...keda.metadata, ownerReferences: [] } };
  assert.equal(scaledObjectOf(labelled), 'orders');
  assert.equal(kedaOwned(hpa('plain', 1)), false);
});
