// A real split of a RabbitMQ queue on the local cluster: the controller runs as a pod with its
// least-privilege RBAC, a developer identity that can do nothing but split creates the
// QueueSplit, the queue-agent moves messages, the fixture app's records prove where each went,
// and the handback gives the app its queue back without losing a message.
//
// While the split is Active, its queue-agent's pod and the controller's are ones a real kubelet
// and PodSecurity `restricted` accept: numeric non-root user, no privilege escalation, every
// capability dropped, RuntimeDefault seccomp, a read-only root filesystem, requests and limits,
// and liveness/readiness probes on the endpoints the agent serves. Every test namespace enforces
// `restricted` (the kube-apiserver's own PodSecurity admission, test/support/kube.ts), so a
// non-compliant spec is refused for real and the split would never go Active.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { AppsV1Api, CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { restrictedKubeconfig } from '../env/k8s/kubeconfig';
import { runDir } from '../env/paths';
import { grantDeveloper, testInstall } from '../../deploy/install';
import { clusterFixture } from '../support/clusterFixture';
import { records, waitForReadyPods } from '../support/kube';
import { pollUntil } from '../support/poll';
import { consumeQueueIds, deployRabbitApp, ids, publishTo, waitForAppReceived } from '../support/rabbitSplit';
import { createSplit, removeSplit, waitForSplitPhase } from '../support/splits';
import { uniqueName } from '../support/services';

const fx = clusterFixture('qs-split-rmq', { rabbitmq: true });
let dev: KubeConfig;

fx.setup(async () => {
  const { kc, namespace } = fx;
  await grantDeveloper(kc, namespace, 'alice');
  dev = await restrictedKubeconfig(
    kc,
    namespace,
    'alice',
    path.join(runDir, 'k8s', 'pki', 'ca.crt'),
    path.join(runDir, `kubeconfig-${namespace}-alice`),
  );
});

function assertHardened(pod: V1Pod, what: string): void {
  const spec = pod.spec!;
  const c = spec.containers[0]!;
  const sc = c.securityContext ?? {};
  assert.equal(spec.securityContext?.runAsNonRoot, true, `${what}: runAsNonRoot`);
  assert.equal(sc.runAsUser ?? spec.securityContext?.runAsUser, 1000, `${what}: numeric UID`);
  assert.equal(sc.runAsGroup ?? spec.securityContext?.runAsGroup, 1000, `${what}: numeric GID`);
  assert.equal(sc.allowPrivilegeEscalation, false, `${what}: no privilege escalation`);
  assert.deepEqual(sc.capabilities?.drop, ['ALL'], `${what}: every capability dropped`);
  assert.equal(sc.seccompProfile?.type ?? spec.securityContext?.seccompProfile?.type, 'RuntimeDefault');
  assert.equal(sc.readOnlyRootFilesystem, true, `${what}: read-only root filesystem`);
  assert.ok(c.resources?.requests?.cpu && c.resources.requests.memory, `${what}: requests`);
  assert.ok(c.resources?.limits?.cpu && c.resources.limits.memory, `${what}: limits`);
  assert.equal(c.livenessProbe?.httpGet?.path, '/healthz', `${what}: liveness on /healthz`);
  assert.equal(c.readinessProbe?.httpGet?.path, '/readyz', `${what}: readiness on /readyz`);
  assert.ok(
    pod.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'),
    `${what}: ready (its readiness probe passes)`,
  );
}

/** The queue-agent's pod (the namespace's only one) and every controller replica, hardened. */
async function assertPodsHardened(kc: KubeConfig, namespace: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const agents = await core.listNamespacedPod({
    namespace,
    labelSelector: 'queuesplit.dev/component=queue-agent',
  });
  assert.equal(agents.items.length, 1, 'one queue-agent pod');
  assertHardened(agents.items[0]!, 'queue-agent');
  const ns = await core.readNamespace({ name: testInstall.namespace });
  assert.equal(ns.metadata?.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
  // Counted: pods that run or will. An install that changed the pod template rolls it (a surge
  // pod for a while), and a pod whose process died with an earlier environment stays Failed.
  const live = await pollUntil(
    'every controller replica admitted (the rollout settled)',
    async () =>
      (
        await core.listNamespacedPod({
          namespace: testInstall.namespace,
          labelSelector: 'app.kubernetes.io/component=controller',
        })
      ).items.filter(
        (p) =>
          !p.metadata?.deletionTimestamp && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded',
      ),
    (pods) => pods.length === testInstall.replicas,
    60_000,
  );
  for (const pod of live) assertHardened(pod, `controller ${pod.metadata?.name}`);
}

test('the developer role can split but cannot scale a workload or read a Secret', async () => {
  const { namespace } = fx;
  const apps = dev.makeApiClient(AppsV1Api);
  await assert.rejects(
    apps.replaceNamespacedDeploymentScale({
      name: 'x',
      namespace,
      body: { metadata: { name: 'x' }, spec: { replicas: 0 } },
    }),
    (e) => (e as { code?: number }).code === 403,
  );
  await assert.rejects(
    dev.makeApiClient(CoreV1Api).readNamespacedSecret({ name: 'amqp', namespace }),
    (e) => (e as { code?: number }).code === 403,
  );
});

test('split a classic queue: the queue-agent is accepted in a namespace enforcing PodSecurity restricted and it and the controller are hardened; alice gets her messages, the app the rest, and gets its queue back', async () => {
  const { kc: admin, namespace, conn, ch, services } = fx;
  const source = uniqueName('orders');
  await ch.assertQueue(source, { durable: true });
  await deployRabbitApp(admin, services, namespace, 'orders-app', source, 2);
  const before = [`${source}-pre-1`, `${source}-pre-2`];
  await publishTo(ch, source, before);

  const started = Date.now();
  const split = await createSplit(dev, namespace, {
    workload: 'orders-app',
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'alice' },
    // The queuesplit-owner admission policy: a split is its creator's (the service account's user name).
    owner: `system:serviceaccount:${namespace}:alice`,
  });
  const active = await waitForSplitPhase(dev, namespace, split.metadata.name, 'Active', 180_000);
  console.log(`activation (request → Active): ${((Date.now() - started) / 1000).toFixed(1)}s`);
  const session = active.status?.queues?.[0]?.shadow?.source;
  assert.ok(session, 'the status names alice session shadow');
  assert.deepEqual(active.status?.queues?.[0]?.envOverrides, { SOURCE_QUEUE: session });
  await assertPodsHardened(admin, namespace);

  const alice = ids(source, 'alice', 10);
  const bob = ids(source, 'bob', 10);
  const plain = ids(source, 'plain', 10);
  await publishTo(ch, source, alice, 'alice');
  await publishTo(ch, source, bob, 'bob');
  await publishTo(ch, source, plain);

  // Alice's local consumer reads her session shadow.
  const mine: string[] = [];
  const local = await consumeQueueIds(conn, session, mine);
  await pollUntil(
    'alice received her 10 messages',
    async () => mine.length,
    (n) => n >= 10,
    60_000,
  );
  await pollUntil(
    'the app processed everything else (and the two sent before the split)',
    async () =>
      new Set(
        records((r) => r.event === 'message' && r.source !== session && r.id.startsWith(source)).map((r) =>
          r.event === 'message' ? r.id : '',
        ),
      ),
    (got) => [...bob, ...plain, ...before].every((id) => got.has(id)),
    60_000,
  );
  assert.deepEqual([...mine].sort(), [...alice].sort(), 'alice got exactly her messages');
  const appIds = records((r) => r.event === 'message' && r.id.startsWith(`${source}-`)).map((r) =>
    r.event === 'message' ? r.id : '',
  );
  assert.ok(!appIds.some((id) => id.includes('-alice-')), 'the app never saw an alice message');
  await local.close();

  // Stop: the route drains, the app gets its queue back.
  const stopped = Date.now();
  await removeSplit(dev, namespace, split.metadata.name, 180_000);
  const apps = admin.makeApiClient(AppsV1Api);
  await pollUntil(
    'the workload is handed back (original env, no finalizer)',
    () => apps.readNamespacedDeployment({ name: 'orders-app', namespace }),
    (d) =>
      d.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'SOURCE_QUEUE')?.value === source &&
      !(d.metadata?.finalizers ?? []).includes('queuesplit.dev/handback'),
    180_000,
  );
  await waitForReadyPods(admin, namespace, 'orders-app', 2);
  console.log(
    `handback, RabbitMQ classic (delete → app on its source): ${((Date.now() - stopped) / 1000).toFixed(1)}s`,
  );
  const after = ids(source, 'after', 5);
  await publishTo(ch, source, after, 'alice');
  await waitForAppReceived(
    'after handback the app consumes the source again, alice header or not',
    after,
    60_000,
    source,
    source,
  );
  const everything = new Set([
    ...records((r) => r.event === 'message').map((r) => (r.event === 'message' ? r.id : '')),
    ...mine,
  ]);
  for (const id of [...before, ...alice, ...bob, ...plain, ...after])
    assert.ok(everything.has(id), `${id} was delivered somewhere`);
});
