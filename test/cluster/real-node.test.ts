// The queue-agent on a real node, as a production cluster runs it: the kubelet at the control
// plane's version with containerd + runc and a CNI bridge (test/env/k8s/node/README.md), the agent
// image built from deploy/Dockerfile without a registry. The pod is the controller's own spec
// (agent/controller/agentDeployment.ts, core/podSecurity.ts) in a namespace enforcing PodSecurity
// `restricted`; a real kubelet must accept it, run it as 1000:1000 and see its probes pass; the API
// server must reach it by port-forward (how the sidecar streams, docs/design.md §8) and read its
// logs; the agent must reach the API server from the pod network (it writes its observed document).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import * as fs from 'node:fs/promises';
import * as net from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import {
  AppsV1Api,
  CoreV1Api,
  NetworkingV1Api,
  PortForward,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { AgentObjects } from '../../agent/controller/agentObjects';
import { mergePatch } from '../../agent/kube/client';
import { DEFAULT_METRICS_PORT } from '../../agent/controller/agentDeployment';
import { DESIRED_API_VERSION, DESIRED_KEY, OBSERVED_KEY } from '../../core/agentProtocol';
import { kubernetesObjectNames } from '../../core/names';
import { testInstall } from '../../deploy/install';
import {
  AGENT_UID,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
} from '../../core/podSecurity';
import { repoRoot, runDir } from '../env/paths';
import { createDevNetns } from '../support/devNetns';
import { clusterFixture } from '../support/clusterFixture';
import { pollUntil, waitForGone } from '../support/poll';
import { DESIRED_DIGESTS_KEY, documentDigest } from '../../agent/kube/sealDocument';

const run = promisify(execFile);
// The node and the API server alone: no controller. The namespace needs no node.
const fx = clusterFixture('qs-real-node', { controller: false });
const NODE = process.env.QS_REAL_NODE ?? 'qs-node-1';
const nodeScript = path.join(repoRoot, 'test', 'env', 'k8s', 'node', 'node.sh');
const containerdSocket = path.join(runDir, 'real-node', NODE, 'containerd', 'containerd.sock');
const AGENT_IMAGE = testInstall.image;
let kc: KubeConfig;
let namespace: string;
let startedNode = false;

async function nodeReady(): Promise<boolean> {
  try {
    const node = await kc.makeApiClient(CoreV1Api).readNode({ name: NODE });
    return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  } catch {
    return false;
  }
}

fx.setup(async () => {
  ({ kc, namespace } = fx);
  if (!(await nodeReady())) {
    // Not brought up by the environment: this file starts it and stops it again. A cold
    // machine builds the kubelet (minutes); the images and containerd take seconds.
    const { stderr } = await run('bash', [nodeScript, 'up'], { timeout: 20 * 60_000, env: process.env });
    console.log(stderr.trim().split('\n').slice(-4).join('\n'));
    startedNode = true;
  }
});

// A node this file started goes once the namespace's pods are gone.
fx.defer(async () => {
  if (!startedNode) return;
  await fx.deleteNamespace();
  await run('bash', [nodeScript, 'down'], { timeout: 5 * 60_000, env: process.env });
});

/** The node is tainted so that no other suite's pod lands on it (test/env/k8s/node/README.md). */
const realNodePlacement = {
  nodeSelector: { 'queuesplit.dev/real-node': 'true' },
  tolerations: [{ key: 'queuesplit.dev/real-node', operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
};

const summary = (p: V1Pod) => {
  const c = p.status?.containerStatuses?.[0];
  return {
    name: p.metadata?.name,
    node: p.spec?.nodeName,
    phase: p.status?.phase,
    ready: isReady(p),
    waiting: c?.state?.waiting ? `${c.state.waiting.reason}: ${c.state.waiting.message ?? ''}` : undefined,
    restarts: c?.restartCount,
  };
};

/** The client's model classes as plain data, to compare with the specs' object literals. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null));

const isReady = (p: V1Pod) =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** One HTTP GET through a Kubernetes API port-forward to `port` of the pod. */
async function getThroughPortForward(
  pod: string,
  port: number,
  urlPath: string,
): Promise<{ status: number; body: string }> {
  const forward = new PortForward(kc);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined); // a late frame written after the GET ended (EPIPE)
    void forward.portForward(namespace, pod, [port], socket, null, socket).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const local = (server.address() as net.AddressInfo).port;
  try {
    return await new Promise((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port: local, path: urlPath, timeout: 30_000, agent: false },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`GET ${urlPath} through port-forward timed out`)));
      req.on('error', reject);
    });
  } finally {
    for (const s of sockets) s.destroy();
    server.close();
  }
}

test('the queue-agent image runs on a real node under PodSecurity restricted, probed, port-forwarded and logged', async () => {
  const core = kc.makeApiClient(CoreV1Api);

  // The namespace really enforces `restricted` (so what follows is accepted under it).
  await assert.rejects(
    core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'privileged' },
        spec: {
          nodeSelector: { 'queuesplit.dev/real-node': 'true' },
          containers: [{ name: 'c', image: AGENT_IMAGE, securityContext: { privileged: true } }],
        },
      },
    }),
    (err: unknown) =>
      /violates PodSecurity .*restricted/.test(String((err as { body?: unknown }).body ?? err)),
  );

  const names = kubernetesObjectNames({
    installId: 'real-node-test',
    workloadUid: randomUUID(),
    workloadName: 'shop',
  });
  const desired = {
    apiVersion: DESIRED_API_VERSION,
    activationId: `real-node-test/${randomUUID()}`,
    generation: 1,
    phase: 'IDLE',
    queues: [],
    routes: [],
  };
  const desiredText = JSON.stringify(desired);
  await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: names.stateConfigMap }, data: { [DESIRED_KEY]: desiredText } },
  });
  // Its seal, as the controller writes it (here in the test's namespace, standing in for the
  // controller's): the agent acts only on a desired document the seal lists.
  await core.createNamespacedConfigMap({
    namespace,
    body: {
      metadata: { name: names.stateSeal },
      data: { [DESIRED_DIGESTS_KEY]: documentDigest(desiredText) },
    },
  });
  // The controller's own objects (ServiceAccount, status ConfigMap, Role, RoleBinding, the
  // seal reader, the Deployment from agentDeployment.ts), then the Deployment placed on the real node.
  const settings = { image: AGENT_IMAGE, controllerNamespace: namespace, metricsPort: DEFAULT_METRICS_PORT };
  await new AgentObjects(kc, settings).ensure(namespace, names, 'shop', []);
  // Its NetworkPolicy closes ingress over the pod network; probes (from the node) and the
  // port-forward below (the pod's loopback) are not pod-network ingress, so they still work.
  const policy = await kc
    .makeApiClient(NetworkingV1Api)
    .readNamespacedNetworkPolicy({ name: names.agentDeployment, namespace });
  assert.deepEqual(policy.spec?.podSelector?.matchLabels, { 'queuesplit.dev/agent': names.agentDeployment });
  assert.deepEqual(policy.spec?.ingress ?? [], []);
  const apps = kc.makeApiClient(AppsV1Api);
  // A merge patch: the deployment controller updates the object meanwhile (no read-modify-write).
  await apps.patchNamespacedDeployment(
    { name: names.agentDeployment, namespace, body: { spec: { template: { spec: realNodePlacement } } } },
    mergePatch,
  );
  const placedAt = Date.now();

  const listAgentPods = async () =>
    (
      await core.listNamespacedPod({
        namespace,
        labelSelector: `queuesplit.dev/agent=${names.agentDeployment}`,
      })
    ).items;
  // On timeout the poll reports each pod's node, phase and waiting reason: the cause in one line.
  await pollUntil(
    `a ready queue-agent pod on ${NODE}`,
    async () => (await listAgentPods()).map(summary),
    (pods) => pods.length === 1 && pods[0]!.node === NODE && pods[0]!.ready,
    180_000,
  );
  const pod = (await listAgentPods())[0]!;
  console.log(
    `queue-agent Ready on ${NODE} ${((Date.now() - placedAt) / 1000).toFixed(1)} s after placement`,
  );
  const podName = pod.metadata!.name!;
  assert.equal(pod.spec?.nodeName, NODE);
  const status = pod.status?.containerStatuses?.[0];
  assert.match(status?.containerID ?? '', /^containerd:\/\//, 'run by containerd, not as a local process');
  assert.equal(status?.restartCount, 0, 'liveness never failed');
  assert.deepEqual(plain(pod.spec?.securityContext), restrictedPodSecurityContext);
  assert.deepEqual(plain(pod.spec?.containers[0]?.securityContext), restrictedContainerSecurityContext);
  assert.match(pod.status?.podIP ?? '', /^\d+\.\d+\.\d+\.\d+$/, 'an address on the node bridge');

  // The agent, in the pod network, reached the API server (the kubernetes Service address):
  // it wrote its observed document for the desired generation.
  const observed = await pollUntil(
    'the agent observed document',
    async () =>
      (await core.readNamespacedConfigMap({ name: names.agentStatusConfigMap, namespace })).data?.[
        OBSERVED_KEY
      ],
    (text) =>
      typeof text === 'string' &&
      (JSON.parse(text) as { observedGeneration?: number }).observedGeneration === 1,
    60_000,
  );
  assert.equal((JSON.parse(observed!) as { activationId: string }).activationId, desired.activationId);

  // Port-forward through the API server and the kubelet (the sidecar's stream rides on it).
  const ready = await getThroughPortForward(podName, DEFAULT_METRICS_PORT, '/readyz');
  assert.deepEqual([ready.status, ready.body.trim()], [200, 'ok']);
  const metrics = await getThroughPortForward(podName, DEFAULT_METRICS_PORT, '/metrics');
  assert.equal(metrics.status, 200);
  assert.match(metrics.body, /^# (HELP|TYPE) /m, 'Prometheus text from the agent');

  // Logs through the API server, and the process really runs as the image's numeric user.
  const logs = await pollUntil(
    'the agent log',
    () => core.readNamespacedPodLog({ name: podName, namespace }),
    (text) => text.includes('agent.started'),
    30_000,
  );
  assert.ok(!logs.includes('guest:guest'), 'no credentials in the log');
  const containerId = (status?.containerID ?? '').replace('containerd://', '');
  const { stdout } = await run('ctr', ['--address', containerdSocket, '-n', 'k8s.io', 'tasks', 'ls']);
  const pid = stdout
    .split('\n')
    .find((l) => l.startsWith(containerId))
    ?.split(/\s+/)[1];
  assert.ok(pid, `containerd runs task ${containerId}`);
  const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(await fs.readFile(`/proc/${pid}/status`, 'utf8'));
  assert.deepEqual([Number(uids?.[1]), Number(uids?.[2])], [AGENT_UID, AGENT_UID], 'real and effective uid');
});

test('a pod that ran before anything made a network namespace with `ip netns add` still terminates', async () => {
  // The CRI mounts each pod's network namespace on a file under /run/netns. The first
  // `ip netns add` on the machine (test/support/devNetns.ts, or any tool) binds that directory
  // over itself unless it is a mount point already, hiding the mounts made before beneath it:
  // the CRI can then never remove them ("unlinkat /var/run/netns/cni-…: device or resource
  // busy"), and every pod that ran before stays Terminating, with its namespace, its
  // Deployment's rollout (the controller's Recreate) and the node's drain.
  const core = kc.makeApiClient(CoreV1Api);
  const name = 'before-netns';
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name },
      spec: {
        ...realNodePlacement,
        terminationGracePeriodSeconds: 1,
        securityContext: restrictedPodSecurityContext,
        containers: [
          {
            name: 'pause',
            image: 'registry.k8s.io/pause:3.10', // the node's own sandbox image (images/build.sh)
            imagePullPolicy: 'Never',
            securityContext: restrictedContainerSecurityContext,
          },
        ],
      },
    },
  });
  await pollUntil(
    `pod ${name} running on ${NODE}`,
    async () => summary(await core.readNamespacedPod({ name, namespace })),
    (p) => p.phase === 'Running',
    60_000,
  );
  const dev = createDevNetns(11);
  try {
    await core.deleteNamespacedPod({ name, namespace });
    await waitForGone(
      `pod ${name} gone after a network namespace was added (see ${NODE}'s kubelet.log for "device or resource busy")`,
      () => core.readNamespacedPod({ name, namespace }),
      60_000,
    );
  } finally {
    dev.close();
  }
  const { stdout } = await run('findmnt', ['-n', '-o', 'PROPAGATION', '--mountpoint', '/run/netns']);
  assert.match(stdout, /shared/, '/run/netns is a shared mount point while the node runs');
});
