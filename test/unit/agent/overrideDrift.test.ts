// Drift of a split workload's env overrides (docs/design.md, "Drift"): which overrides the pod
// template no longer carries, named "<container>/<ENV>".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { overrideDrift } from '../../../agent/controller/workloads';

const workload = (env: Record<string, string>): V1Deployment => ({
  spec: {
    selector: {},
    template: {
      spec: {
        containers: [{ name: 'app', env: Object.entries(env).map(([name, value]) => ({ name, value })) }],
      },
    },
  },
});

const overrides = [
  { container: 'app', name: 'SOURCE_TOPIC', value: 'qs-app-shadow' },
  { container: 'app', name: 'GROUP_ID', value: 'qs-app-group' },
];

test('overrides in place are no drift', () => {
  assert.deepEqual(
    overrideDrift(workload({ SOURCE_TOPIC: 'qs-app-shadow', GROUP_ID: 'qs-app-group' }), overrides),
    [],
  );
});

test('an override changed back to the original, or removed, is drift', () => {
  assert.deepEqual(overrideDrift(workload({ SOURCE_TOPIC: 'orders', GROUP_ID: 'qs-app-group' }), overrides), [
    'app/SOURCE_TOPIC',
  ]);
  assert.deepEqual(overrideDrift(workload({ SOURCE_TOPIC: 'qs-app-shadow' }), overrides), ['app/GROUP_ID']);
});
