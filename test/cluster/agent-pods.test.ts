// The controller's and the queue-agent's pods are ones a real kubelet and PodSecurity
// `restricted` accept (issue 14): numeric non-root user, no privilege escalation, every
// capability dropped, RuntimeDefault seccomp, a read-only root filesystem, requests and limits,
// and liveness/readiness probes on the endpoints the agent serves. The test namespace enforces
// `restricted` (the kube-apiserver's own PodSecurity admission), so a non-compliant spec is
// refused for real.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as amqp from 'amqplib';
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { installController, testInstall } from '../../deploy/install';
import { adminConfig, createNamespace, deleteNamespace } from '../support/kube';
import { deployRabbitApp } from '../support/rabbitSplit';
import { createSplit, deleteSplit, waitForSplitGone, waitForSplitPhase } from '../support/splits';
import { pollUntil } from '../support/poll';
import { loadServices, uniqueName } from '../support/services';

const services = loadServices();
let kc: KubeConfig;
let namespace: string;
let conn: amqp.ChannelModel;

before(async () => {
  kc = adminConfig(services.kubeconfig);
  await installController(kc);
  namespace = await createNamespace(kc, 'qs-restricted');
  conn = await amqp.connect(services.amqpUrl);
});
after(async () => {
  await conn?.close().catch(() => undefined);
  await deleteNamespace(kc, namespace);
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

test('the queue-agent is accepted in a namespace enforcing PodSecurity restricted: the split goes Active', async () => {
  const source = uniqueName('restricted-orders');
  const ch = await conn.createChannel();
  await ch.assertQueue(source, { durable: true });
  await ch.close();
  await deployRabbitApp(kc, services, namespace, 'hardened', source);
  const split = await createSplit(kc, namespace, {
    workload: 'hardened',
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'rosa' },
    owner: 'rosa',
  });
  // Before issue 14 the agent's pods were refused here and the split sat in Preparing.
  await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', 90_000);
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
  await deleteSplit(kc, namespace, split.metadata.name);
  await waitForSplitGone(kc, namespace, split.metadata.name, 90_000);
});
