// Installs Queue Split into a cluster from the same sources users apply (the generated CRD and
// deploy/manifests.ts): used by the tests, `npm run demo` and the extension's install command.
// Idempotent: applying twice changes nothing.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { parse } from 'yaml';
import { applyObjects } from './apply';
import { CONTROLLER_SELECTOR, controllerManifests, developerBinding, type InstallOptions } from './manifests';
import { setTimeout as sleep } from 'node:timers/promises';

export async function installCrd(kc: KubeConfig): Promise<void> {
  const crd = parse(
    fs.readFileSync(path.join(repoRoot, 'deploy/crd/queuesplit.crd.yaml'), 'utf8'),
  ) as KubernetesObject;
  await applyObjects(kc, [crd]);
  const api = kc.makeApiClient(ApiextensionsV1Api);
  await pollUntil(
    'QueueSplit CRD established',
    () => api.readCustomResourceDefinition({ name: crd.metadata!.name! }),
    (c) => c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True') ?? false,
  );
}

const repoRoot = path.resolve(__dirname, '..');

async function pollUntil<T>(
  what: string,
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 20_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined && accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs / 1000}s`);
    await sleep(500);
  }
}

export const testInstall: InstallOptions = {
  namespace: 'queuesplit-system',
  // The image the real test node builds from deploy/Dockerfile and this checkout's dist/agent.js
  // (test/env/k8s/node/images/build.sh); not one anyone pulls, so not the published one (core/image.ts).
  image: 'queuesplit/agent:test',
  // Two replicas as users run it: one leads, one stands by (the crash tests kill the leader).
  replicas: 2,
  // Every pod runs on the real node (kubelet + containerd, test/env/k8s/node/README.md); the
  // queue-agents are placed there by label as an operator would place them on a node pool.
  // Timeouts fit a test run.
  extraArgs: [
    '--agent-node-selector=queuesplit.dev/real-node=true',
    '--step-timeout=120',
    // Well above the test node's restart back-off (1 s, node.sh): the kill -9 tests are not crash loops.
    '--agent-start-timeout=45',
    '--resync-ms=300',
    '--lease-seconds=6',
    // The test broker collects statistics every second (test/env/rabbitmq.ts).
    '--rabbitmq-statistics-interval=1',
    // The test SQS (ElasticMQ, test/env/elasticmq.ts) counts exactly: proofs need no lag.
    '--sqs-counts-lag=0',
    // A killed queue-agent's successor waits out the fence's lock: the kill -9 tests kill often.
    '--sqs-lock-timeout=6',
  ],
};

export async function installController(
  kc: KubeConfig,
  options: InstallOptions = testInstall,
): Promise<void> {
  if (!fs.existsSync(path.join(repoRoot, 'dist', 'agent.js'))) {
    throw new Error('dist/agent.js is missing: run `npm run build` before the cluster suite');
  }
  await installCrd(kc);
  // The bundle's digest on the pod template: a rebuilt agent rolls the controller.
  const bundle = createHash('sha256')
    .update(fs.readFileSync(path.join(repoRoot, 'dist', 'agent.js')))
    .digest('hex')
    .slice(0, 16);
  await applyObjects(
    kc,
    controllerManifests({
      ...options,
      podAnnotations: { 'queuesplit.dev/bundle': bundle },
    }) as unknown as KubernetesObject[],
  );
  const apps = kc.makeApiClient(AppsV1Api);
  await pollUntil(
    'the controller runs the current bundle',
    () => apps.readNamespacedDeployment({ name: 'queuesplit-controller', namespace: options.namespace }),
    (d) =>
      (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
      d.status?.updatedReplicas === options.replicas &&
      d.status?.readyReplicas === options.replicas &&
      d.status?.replicas === options.replicas,
    120_000,
  );
  // Installed means led by a pod of this install: a leader that was killed (not stopped) keeps
  // the lease until it expires, and until then nothing serves the new settings.
  const core = kc.makeApiClient(CoreV1Api);
  const leases = kc.makeApiClient(CoordinationV1Api);
  await pollUntil(
    'a controller pod of this install holds the leader lease',
    async () => {
      const lease = await leases.readNamespacedLease({
        name: 'queuesplit-controller',
        namespace: options.namespace,
      });
      const pods = await core.listNamespacedPod({
        namespace: options.namespace,
        labelSelector: CONTROLLER_SELECTOR,
      });
      const holder = lease.spec?.holderIdentity?.split('_')[0];
      return pods.items.some((p) => p.metadata?.name === holder && !p.metadata?.deletionTimestamp);
    },
    (led) => led,
    90_000,
  );
}

export async function grantDeveloper(
  kc: KubeConfig,
  namespace: string,
  serviceAccount: string,
): Promise<void> {
  await applyObjects(kc, [
    developerBinding(namespace, {
      kind: 'ServiceAccount',
      name: serviceAccount,
      namespace,
    }) as unknown as KubernetesObject,
  ]);
}
