// Drift of a split workload's env overrides (docs/design.md, "Drift"): which overrides the pod
// template no longer carries, named "<container>/<ENV>".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { copyName } from '../../../agent/controller/configCopies';
import { overrideDrift, type SettingOverride } from '../../../agent/controller/workloads';

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

const overrides: SettingOverride[] = [
  { container: 'app', at: { kind: 'env', name: 'SOURCE_TOPIC' }, value: 'qs-app-shadow' },
  { container: 'app', at: { kind: 'env', name: 'GROUP_ID' }, value: 'qs-app-group' },
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

test('a volume that names its ConfigMap again instead of the split copy is drift', () => {
  const file: SettingOverride = {
    container: 'app',
    at: {
      kind: 'file',
      path: '/config/application.yml',
      key: 'app.topic',
      format: 'yaml',
      volume: 'config',
      configMap: 'orders-config',
      configMapKey: 'application.yml',
    },
    value: 'qs-app-shadow',
  };
  const withVolume = (configMap: string): V1Deployment => {
    const w = workload({});
    w.metadata = { uid: 'uid-1' };
    w.spec!.template.spec!.volumes = [{ name: 'config', configMap: { name: configMap } }];
    return w;
  };
  assert.deepEqual(overrideDrift(withVolume(copyName('uid-1', 'config')), [file]), []);
  assert.deepEqual(overrideDrift(withVolume('orders-config'), [file]), ['app/config (its ConfigMap)']);
});
