// test-group: serial (uninstalls the controller and the CRD)
// Uninstalling Queue Split (README "Uninstall"), one split through both tests.
//
// First in the wrong order: `kubectl delete -f controller.yaml` while a split is Active. That
// deletes the controller's namespace with what it keeps there (its install id, the state seals,
// the ownership Leases), but not the workload's state, its queue-agent or its shadows in the
// tenant namespace. Installed again, the controller gets a new install id: it must not take the
// cut-over workload for a fresh one (a second cutover on top of the first, the first queue-agent
// still copying into shadows nobody reads). It acts on nothing, says why and names the operator's
// two steps (the earlier install id back, then the seal of a state they checked); after them the
// split goes on.
//
// Then as README says: the split deleted, the handback awaited, then the controller, then the
// CRD: nothing of Queue Split is left in the tenant namespace or on the broker, and the app got
// every message, the developer's drained back from her shadow.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { mergePatch } from '../../agent/kube/client';
import { AGENT_LABEL } from '../../agent/controller/agentDeployment';
import { installController, testInstall } from '../../deploy/install';
import { STATE_KEY } from '../../core/agentProtocol';
import { parseState } from '../../core/state/stateDocument';
import { queueExists } from '../support/rabbitManagement';
import { forClient } from '../../deploy/clientObject';
import { controllerManifests } from '../../deploy/manifests';
import { clusterFixture } from '../support/clusterFixture';
import { readWorkload, readWorkloadStatus } from '../support/handback';
import { pollUntil, waitForGone } from '../support/poll';
import { ids, publishTo, rabbitApp, waitForAppReceived } from '../support/rabbitSplit';
import { activeSplit, getSplit, removeSplit, waitForSplitPhase } from '../support/splits';
import { uniqueName } from '../support/services';

const WORKLOAD = 'uninst-app';
const CRD = 'queuesplits.queuesplit.dev';
const controllerNs = testInstall.namespace;
const fx = clusterFixture('qs-uninst', { rabbitmq: true });
fx.defer(() => installController(fx.kc)); // the suites after this one need a controller, whatever happened here

/** What `kubectl delete -f deploy/install/controller.yaml` does, then waits for the namespace to go. */
async function uninstallController(): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(fx.kc);
  for (const object of [...controllerManifests(testInstall)].reverse()) {
    await api.delete(forClient(object as unknown as KubernetesObject)).catch((err: unknown) => {
      if ((err as { code?: number }).code !== 404) throw err;
    });
  }
  await waitForGone(
    `namespace ${controllerNs} is gone`,
    () => fx.kc.makeApiClient(CoreV1Api).readNamespace({ name: controllerNs }),
    180_000,
  );
}

async function installId(): Promise<string> {
  const cm = await fx.kc
    .makeApiClient(CoreV1Api)
    .readNamespacedConfigMap({ name: 'queuesplit-install', namespace: controllerNs });
  return cm.data!.installId!;
}

const containerEnv = async () =>
  JSON.stringify(
    (await readWorkload(fx.kc, 'Deployment', fx.namespace, WORKLOAD)).spec?.template.spec?.containers[0]?.env,
  );

async function degradedWith(name: string, reason: string) {
  const found = await pollUntil(
    `the split is Degraded with reason ${reason}`,
    async () => {
      const s = await getSplit(fx.kc, fx.namespace, name);
      // What the poll's failure shows: the phase and condition it found instead.
      return { phase: s?.status?.phase, condition: s?.status?.conditions?.[0], split: s };
    },
    (s) => s.phase === 'Degraded' && s.condition?.reason === reason,
    120_000,
  );
  return found.split!;
}

/** What the first test leaves to the second: an Active split and the messages the app must get. */
const shared: {
  split?: string;
  original?: string;
  sent: string[];
  prefix: string;
} = {
  sent: [],
  prefix: '',
};

test('the controller uninstalled during a split and installed again acts on nothing (StateOfAnotherInstall, then StateUnsealed) until an operator gives back its install id and seals the state it checked; then the split goes on', async () => {
  const { kc, namespace, ch } = fx;
  const core = kc.makeApiClient(CoreV1Api);
  const source = await rabbitApp(fx, WORKLOAD);
  const original = await containerEnv();
  const split = await activeSplit(kc, namespace, { workload: WORKLOAD, user: 'ana' });
  const cutOver = await containerEnv();
  assert.notEqual(cutOver, original, 'the Active split redirected the workload');
  const earlierId = await installId();
  // Nobody consumes ana's session shadow: her messages wait there and must reach the app after.
  const prefix = uniqueName('uninst-msg');
  const ana = ids(prefix, 'ana', 5);
  const team = ids(prefix, 'team', 5);
  await publishTo(ch, source, ana, 'ana');
  await publishTo(ch, source, team);

  await uninstallController();
  // No controller: the queue-agent of the split goes on feeding the app.
  const meanwhile = ids(prefix, 'meanwhile', 5);
  await publishTo(ch, source, meanwhile);
  await waitForAppReceived(
    'the app still gets its messages with no controller installed',
    [...team, ...meanwhile],
    60_000,
    prefix,
  );

  await installController(kc);
  const newId = await installId();
  assert.notEqual(newId, earlierId, 'a reinstall gets a new install id');
  const foreign = await degradedWith(split.metadata.name, 'StateOfAnotherInstall');
  assert.match(foreign.status?.conditions?.[0]?.message ?? '', new RegExp(`install ${earlierId}`));
  const giveBack = foreign.status?.nextAction ?? '';
  assert.match(giveBack, new RegExp(`--from-literal=installId=${earlierId} `), giveBack);
  // A few passes more: still nothing done, no second state, the workload as the first install left it.
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const states = await core.listNamespacedConfigMap({
    namespace,
    labelSelector: 'queuesplit.dev/state=true',
  });
  assert.equal(states.items.length, 1, 'no second state was written');
  assert.equal(await containerEnv(), cutOver, 'the workload was not cut over again');
  const agents = await kc.makeApiClient(AppsV1Api).listNamespacedDeployment({
    namespace,
    labelSelector: `${AGENT_LABEL}=queue-agent`,
  });
  assert.equal(agents.items.length, 1, 'no second queue-agent');

  // The operator's first step, as the nextAction says: the earlier install id, a restart.
  await core.replaceNamespacedConfigMap({
    name: 'queuesplit-install',
    namespace: controllerNs,
    body: { metadata: { name: 'queuesplit-install' }, data: { installId: earlierId } },
  });
  await kc.makeApiClient(AppsV1Api).patchNamespacedDeployment(
    {
      name: 'queuesplit-controller',
      namespace: controllerNs,
      body: { spec: { template: { metadata: { annotations: { 'queuesplit.dev/test-restart': prefix } } } } },
    },
    mergePatch,
  );
  const unsealed = await degradedWith(split.metadata.name, 'StateUnsealed');
  assert.match(unsealed.status?.conditions?.[0]?.message ?? '', /has no seal/);
  const sealCommand = (unsealed.status?.nextAction ?? '').match(
    new RegExp(
      `kubectl -n ${controllerNs} create configmap (\\S+) --from-literal=digests=([0-9a-f]{64}) && kubectl -n ${controllerNs} label configmap \\S+ (.+?)\\. Otherwise`,
    ),
  );
  assert.ok(sealCommand, unsealed.status?.nextAction);
  assert.equal(await containerEnv(), cutOver, 'nothing was acted on before the seal');

  // The second step: the operator checked the state and seals it, exactly as the command says.
  const labels = Object.fromEntries(sealCommand[3]!.split(' ').map((l) => l.split('=') as [string, string]));
  await core.createNamespacedConfigMap({
    namespace: controllerNs,
    body: { metadata: { name: sealCommand[1], labels }, data: { digests: sealCommand[2]! } },
  });
  await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active');
  // Taken again: the ownership Leases went with the namespace.
  const leases = await kc
    .makeApiClient(CoordinationV1Api)
    .listNamespacedLease({ namespace: controllerNs, labelSelector: 'queuesplit.dev/ownership=true' });
  assert.ok(
    leases.items.some((l) => l.spec?.holderIdentity?.startsWith(`${namespace}/${WORKLOAD}/`)),
    'the workload holds its source again',
  );
  Object.assign(shared, {
    split: split.metadata.name,
    original,
    sent: [...ana, ...team, ...meanwhile],
    prefix,
  });
});

test('then uninstalled as README says (the split deleted, the handback awaited, then the controller, then the CRD): no finalizer, no queue-agent, no Queue Split object or broker resource is left, and the app got every message', async () => {
  const { kc, namespace, services } = fx;
  const core = kc.makeApiClient(CoreV1Api);
  assert.ok(shared.split, 'the test before left an Active split');
  // The broker resources as the state document records them (its inventory).
  const stateDocs = await core.listNamespacedConfigMap({
    namespace,
    labelSelector: 'queuesplit.dev/state=true',
  });
  const state = parseState(stateDocs.items[0]?.data?.[STATE_KEY] ?? '');
  assert.ok(state.ok, 'the split state reads');
  const brokerNames = state.value.inventory
    .filter((r) => r.provider === 'rabbitmq' && r.kind === 'queue')
    .map((r) => r.name);
  assert.ok(brokerNames.length >= 2, `an app shadow and a session shadow: ${brokerNames.join(', ')}`);
  for (const queue of brokerNames)
    assert.ok(await queueExists(services.rabbitManagementUrl, queue), `${queue} exists while split`);

  // README "Uninstall", command by command (for this namespace: other suites' splits are theirs).
  await removeSplit(kc, namespace, shared.split, 180_000);
  await pollUntil(
    'the split state ConfigMaps are gone (every workload handed back)',
    () => core.listNamespacedConfigMap({ namespace, labelSelector: 'queuesplit.dev/state=true' }),
    (state) => state.items.length === 0,
    240_000,
  );
  assert.equal((await readWorkloadStatus(kc, 'Deployment', namespace, WORKLOAD))?.phase, 'HandedBack');
  const cleanup = await core.listNamespacedConfigMap({
    namespace: controllerNs,
    labelSelector: `queuesplit.dev/cleanup=true,queuesplit.dev/workload=${WORKLOAD}`,
  });
  assert.equal(cleanup.items.length, 0, 'nothing had to be kept');
  await uninstallController();
  const crds = kc.makeApiClient(ApiextensionsV1Api);
  await crds.deleteCustomResourceDefinition({ name: CRD });
  await waitForGone(
    'the CRD is gone (no QueueSplit finalizer holds it)',
    () => crds.readCustomResourceDefinition({ name: CRD }),
    60_000,
  );

  const handedBack = await readWorkload(kc, 'Deployment', namespace, WORKLOAD);
  assert.deepEqual(handedBack.metadata?.finalizers ?? [], [], 'no finalizer on the workload');
  assert.equal(await containerEnv(), shared.original, 'the workload has its own env');
  const ours = (names: (string | undefined)[]) => names.filter((n) => n?.startsWith('qs-'));
  const apps = kc.makeApiClient(AppsV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const left = [
    ...ours((await apps.listNamespacedDeployment({ namespace })).items.map((o) => o.metadata?.name)),
    ...ours((await core.listNamespacedConfigMap({ namespace })).items.map((o) => o.metadata?.name)),
    ...ours((await core.listNamespacedServiceAccount({ namespace })).items.map((o) => o.metadata?.name)),
    ...ours((await rbac.listNamespacedRole({ namespace })).items.map((o) => o.metadata?.name)),
    ...ours((await rbac.listNamespacedRoleBinding({ namespace })).items.map((o) => o.metadata?.name)),
  ];
  assert.deepEqual(left, [], 'no Queue Split object is left in the namespace');
  for (const queue of brokerNames)
    assert.equal(await queueExists(services.rabbitManagementUrl, queue), false, `${queue} was deleted`);
  await waitForAppReceived(
    'the app processed every message, ana’s drained back from her shadow',
    shared.sent,
    120_000,
    shared.prefix,
  );
});
