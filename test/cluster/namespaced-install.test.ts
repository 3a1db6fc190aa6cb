// test-group: serial (reinstalls the shared controller namespaced)
// A namespaced install (README "Install"). The controller is installed with `watchNamespaces` = one
// namespace: a split there activates; a split in a namespace it does not serve is never touched
// (its workload keeps its spec, no finalizer, no state), and RBAC gives the controller nothing
// there — it cannot even list QueueSplits, so the split stays without a status (README: it stays
// Pending). Restores the suite's cluster-wide controller.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppsV1Api, AuthorizationV1Api, CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { installController, testInstall } from '../../deploy/install';
import { clusterFixture } from '../support/clusterFixture';
import { rabbitApp } from '../support/rabbitSplit';
import { createSplit, deleteSplit, getSplit, waitForSplitGone, waitForSplitPhase } from '../support/splits';

const WORKLOAD = 'shop';
// Two namespaces, each with the workload; the controller is this file's own, installed below.
const servedFx = clusterFixture('qs-ns-served', { controller: false, rabbitmq: true });
const otherFx = clusterFixture('qs-ns-other', { controller: false, rabbitmq: true });
servedFx.defer(async () => {
  const { kc } = servedFx;
  await kc
    .makeApiClient(RbacAuthorizationV1Api)
    .deleteNamespacedRoleBinding({
      name: 'queuesplit-controller-workloads',
      namespace: testInstall.namespace,
    })
    .catch(() => undefined);
  await installController(kc); // the suite's cluster-wide controller for the files that follow
});

/** Switching a cluster-wide install to a namespaced one: its ClusterRoleBinding goes (README). */
async function deleteClusterBinding(): Promise<void> {
  await servedFx.kc
    .makeApiClient(RbacAuthorizationV1Api)
    .deleteClusterRoleBinding({ name: 'queuesplit-controller' })
    .catch((err: unknown) => {
      if ((err as { code?: number }).code !== 404) throw err;
    });
}

// The set-up needs both namespaces: it runs in the second fixture's hook once the first is ready.
otherFx.setup(async () => {
  await servedFx.ready();
  for (const fx of [servedFx, otherFx]) await rabbitApp(fx, WORKLOAD);
  await deleteClusterBinding();
  await installController(servedFx.kc, { ...testInstall, watchNamespaces: [servedFx.namespace] });
});

test('a namespaced install: RBAC grants the controller nothing outside the listed namespaces', async () => {
  const { kc, namespace: served } = servedFx;
  const other = otherFx.namespace;
  const authz = kc.makeApiClient(AuthorizationV1Api);
  const user = `system:serviceaccount:${testInstall.namespace}:queuesplit-controller`;
  const can = async (namespace: string, resource: string, verb: string, group = '') =>
    (
      await authz.createSubjectAccessReview({
        body: { spec: { user, resourceAttributes: { namespace, resource, verb, group } } },
      })
    ).status?.allowed ?? false;
  assert.equal(await can(served, 'deployments', 'update', 'apps'), true, 'update workloads where it serves');
  assert.equal(await can(served, 'queuesplits', 'list', 'queuesplit.dev'), true);
  assert.equal(await can(served, 'namespaces', 'get'), true, 'tell its own served namespace being deleted');
  assert.equal(await can(other, 'deployments', 'update', 'apps'), false, 'no workload write elsewhere');
  assert.equal(
    await can(other, 'queuesplits', 'list', 'queuesplit.dev'),
    false,
    'no QueueSplit read elsewhere',
  );
  assert.equal(await can(other, 'configmaps', 'create'), false);
});

test('a namespaced install: a split in a listed namespace activates; one elsewhere is never touched', async () => {
  const { kc, namespace: served } = servedFx;
  const other = otherFx.namespace;
  const apps = kc.makeApiClient(AppsV1Api);
  const before = await apps.readNamespacedDeployment({ name: WORKLOAD, namespace: other });
  const ignored = await createSplit(kc, other, {
    workload: WORKLOAD,
    queues: ['orders'],
    filter: { u: 'x' },
    owner: 'lee',
  });
  const split = await createSplit(kc, served, {
    workload: WORKLOAD,
    queues: ['orders'],
    filter: { u: 'x' },
    owner: 'lee',
  });
  await waitForSplitPhase(kc, served, split.metadata.name, 'Active', 120_000);
  // The served split went all the way while the other one was listed by nobody.
  const untouched = await getSplit(kc, other, ignored.metadata.name);
  assert.equal(untouched?.status, undefined, 'no status: the controller cannot see it (README: Pending)');
  assert.deepEqual(untouched?.metadata.finalizers ?? [], [], 'no finalizer on the ignored split');
  const after = await apps.readNamespacedDeployment({ name: WORKLOAD, namespace: other });
  assert.equal(after.metadata?.generation, before.metadata?.generation, 'the other workload was not changed');
  assert.deepEqual(after.metadata?.finalizers ?? [], []);
  const states = await kc
    .makeApiClient(CoreV1Api)
    .listNamespacedConfigMap({ namespace: other, labelSelector: 'queuesplit.dev/state=true' });
  assert.equal(states.items.length, 0, 'no split state in the other namespace');
  await deleteSplit(kc, served, split.metadata.name);
  await waitForSplitGone(kc, served, split.metadata.name, 120_000);
  await deleteSplit(kc, other, ignored.metadata.name);
});
