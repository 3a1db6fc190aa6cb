// The local kube-apiserver is a real one: it reports its version, enforces RBAC, serves
// Leases with optimistic concurrency, custom resources with a status subresource, and
// finalizers that hold deletion.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  VersionApi,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { applyObjects } from '../../deploy/apply';
import { runDir } from '../env/paths';
import { restrictedKubeconfig } from '../env/k8s/kubeconfig';
import { clusterFixture } from '../support/clusterFixture';
import { pollUntil } from '../support/poll';

// The API server alone: no controller.
const fx = clusterFixture('qs-api', { controller: false });
let kc: KubeConfig;
let namespace: string;
const code = (err: unknown) => (err as { code?: number }).code;

fx.setup(() => {
  ({ kc, namespace } = fx);
});

test('the API server reports the version it was built as', async () => {
  const version = await kc.makeApiClient(VersionApi).getCode();
  assert.match(version.gitVersion, /^v1\.34\.\d+$/);
  assert.equal(version.gitVersion, process.env.KUBERNETES_VERSION);
});

test('RBAC is enforced: a fresh service account can do nothing until granted', async () => {
  const file = path.join(runDir, `kubeconfig-${namespace}-nobody`);
  const nobody = await restrictedKubeconfig(
    kc,
    namespace,
    'nobody',
    path.join(runDir, 'k8s', 'pki', 'ca.crt'),
    file,
  );
  await assert.rejects(
    nobody.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace }),
    (e) => code(e) === 403,
  );
  await assert.rejects(
    nobody.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace }),
    (e) => code(e) === 403,
  );
  fs.rmSync(file, { force: true });
});

test('Lease: create, renew with the current resourceVersion, conflict (409) with a stale one', async () => {
  const leases = kc.makeApiClient(CoordinationV1Api);
  const created = await leases.createNamespacedLease({
    namespace,
    body: { metadata: { name: 'owner' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } },
  });
  const renewed = await leases.replaceNamespacedLease({
    name: 'owner',
    namespace,
    body: { ...created, spec: { ...created.spec, holderIdentity: 'a', leaseDurationSeconds: 20 } },
  });
  assert.equal(renewed.spec?.leaseDurationSeconds, 20);
  await assert.rejects(
    leases.replaceNamespacedLease({
      name: 'owner',
      namespace,
      body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } }, // stale resourceVersion
    }),
    (e) => code(e) === 409,
  );
  const current = await leases.readNamespacedLease({ name: 'owner', namespace });
  assert.equal(current.spec?.holderIdentity, 'a');
});

test('a CRD with a status subresource, and a finalizer that blocks deletion until removed', async () => {
  const group = 'smoke.queuesplit.dev';
  const crds = kc.makeApiClient(ApiextensionsV1Api);
  await crds
    .createCustomResourceDefinition({
      body: {
        metadata: { name: `widgets.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: { type: 'object', properties: { size: { type: 'integer' } } },
                    status: { type: 'object', properties: { phase: { type: 'string' } } },
                  },
                },
              },
            },
          ],
        },
      },
    })
    .catch((e: unknown) => {
      if (code(e) !== 409) throw e;
    });
  await pollUntil(
    'CRD established',
    () => crds.readCustomResourceDefinition({ name: `widgets.${group}` }),
    (crd) => crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false,
  );

  const objects = kc.makeApiClient(CustomObjectsApi);
  const ref = { group, version: 'v1', namespace, plural: 'widgets' };
  await pollUntil(
    'widget created (discovery may lag the CRD)',
    () =>
      objects.createNamespacedCustomObject({
        ...ref,
        body: {
          apiVersion: `${group}/v1`,
          kind: 'Widget',
          metadata: { name: 'w1', finalizers: ['queuesplit.dev/test'] },
          spec: { size: 1 },
          status: { phase: 'ignored-on-create' },
        },
      }),
    () => true,
  );
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  // The main resource ignores status; the status subresource ignores spec.
  await objects.patchNamespacedCustomObject(
    { ...ref, name: 'w1', body: { status: { phase: 'Main' } } },
    merge,
  );
  await objects.patchNamespacedCustomObjectStatus(
    { ...ref, name: 'w1', body: { spec: { size: 9 }, status: { phase: 'Ready' } } },
    merge,
  );
  const w = (await objects.getNamespacedCustomObject({ ...ref, name: 'w1' })) as {
    spec: { size: number };
    status?: { phase: string };
  };
  assert.deepEqual([w.spec.size, w.status?.phase], [1, 'Ready']);

  await objects.deleteNamespacedCustomObject({ ...ref, name: 'w1' });
  const held = (await objects.getNamespacedCustomObject({ ...ref, name: 'w1' })) as {
    metadata: { deletionTimestamp?: string };
  };
  assert.ok(held.metadata.deletionTimestamp, 'deletion is pending while the finalizer is there');
  await objects.patchNamespacedCustomObject(
    { ...ref, name: 'w1', body: { metadata: { finalizers: null } } },
    merge,
  );
  await pollUntil(
    'widget gone after the finalizer is removed',
    () =>
      objects.getNamespacedCustomObject({ ...ref, name: 'w1' }).then(
        () => 'present',
        (e: unknown) => String(code(e)),
      ),
    (s) => s === '404',
  );
});

test('applyObjects: installs run at once (parallel test files, two people) all succeed while the deployment controller writes the Deployment', async () => {
  // Each install writes the same settings; the deployment controller meanwhile records the new
  // rollout on the object (its revision annotation, its status). None of them may be refused.
  const deployment = (bundle: string): KubernetesObject =>
    ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'applied', namespace },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'applied' } },
        template: {
          metadata: { labels: { app: 'applied' }, annotations: { bundle } },
          spec: { containers: [{ name: 'c', image: 'queuesplit/none:0' }] },
        },
      },
    }) as KubernetesObject;
  await applyObjects(kc, [deployment('0')]);
  const apps = kc.makeApiClient(AppsV1Api);
  for (let round = 1; round <= 5; round++) {
    await Promise.all(Array.from({ length: 6 }, () => applyObjects(kc, [deployment(String(round))])));
    const d = await apps.readNamespacedDeployment({ name: 'applied', namespace });
    assert.equal(d.spec?.template.metadata?.annotations?.bundle, String(round));
  }
  // What the install owns follows the manifest: a field it no longer sets is removed; what others
  // wrote on the object is kept.
  const outcomes: string[] = [];
  const labelled = deployment('5');
  labelled.metadata!.labels = { extra: 'x' };
  await applyObjects(kc, [labelled], { applied: (_, outcome) => outcomes.push(outcome) });
  await applyObjects(kc, [deployment('5')], { applied: (_, outcome) => outcomes.push(outcome) });
  await applyObjects(kc, [deployment('5')], { applied: (_, outcome) => outcomes.push(outcome) });
  assert.deepEqual(outcomes, ['updated', 'updated', 'unchanged']);
  const d = await apps.readNamespacedDeployment({ name: 'applied', namespace });
  assert.equal(d.metadata?.labels?.extra, undefined, 'the label the install no longer sets is gone');
  assert.ok(
    d.metadata?.annotations?.['deployment.kubernetes.io/revision'],
    "the deployment controller's revision is kept",
  );
});
