// What the sidecar suites share: the bundle under test, a handle on a running sidecar (its
// JSON lines, its exit), a developer with namespace-scoped RBAC, an annotated workload whose
// connection env comes from a ConfigMap and a Secret, and — because the controller is not part
// of this suite — helpers that play the controller's role on the real API server: install the
// CRD, find the developer's QueueSplit, write its status (status subresource), hold a finalizer.
// The CRD lives under a private API group reached through groupProxy.ts, so a real controller
// run by another suite on the same API server never sees (or fights over) these splits.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import {
  QUEUE_SPLIT_GROUP,
  QUEUE_SPLIT_PLURAL,
  QUEUE_SPLIT_VERSION,
  type QueueSplit,
  type QueueSplitQueueStatus,
} from '../../core/crd/queueSplitSchema';
import { parseSidecarLine, type SidecarMessage } from '../../core/sidecarProtocol';
import { DESIRED_API_VERSION, type AgentRoute, type DesiredState } from '../../core/agentProtocol';
import { repoRoot, runDir } from '../env/paths';
import { restrictedKubeconfig } from '../env/k8s/kubeconfig';
import { fixtureDeployment } from '../support/kube';
import { proxiedKubeconfig } from './groupProxy';
import { pollUntil } from '../support/poll';
import { sidecarTranscriptDir } from '../support/leakScan';
import { createSecret } from '../support/secrets';
import { getSplit as getSplitOf } from '../support/splits';
import type { Services } from '../support/services';
import { specFilter } from '../../core/crd/validateQueueSplit';

const sidecarOutputDir = sidecarTranscriptDir(runDir);

/** The suite's private copy of the QueueSplit group (must not contain "queuesplit.dev"). */
export const PRIVATE_GROUP = 'sidecar-suite.queuesplit.test';
export const REF = { group: PRIVATE_GROUP, version: QUEUE_SPLIT_VERSION, plural: QUEUE_SPLIT_PLURAL };
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export { sidecarBundle } from '../support/sidecarBundle';

/** A running sidecar: collects its protocol lines and its stderr. */
export class SidecarProcess {
  readonly messages: SidecarMessage[] = [];
  readonly rawStdout: string[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;

  /** `wrap`: a command that execs the sidecar, e.g. `ip netns exec <ns>` (test/support/devNetns.ts). */
  constructor(bundle: string, args: readonly string[], env: NodeJS.ProcessEnv, wrap: readonly string[] = []) {
    // stdin is a pipe, as the extension spawns it: tests write requests (a stop) on it.
    const [command, ...prefix] = [...wrap, process.execPath];
    this.child = spawn(command!, [...prefix, bundle, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdin?.on('error', () => undefined); // EPIPE after it exited: nothing to stop
    // Everything it says is kept for the leak scan (test/support/leakScan.ts), which greps it
    // for the credentials, header values and bodies the suites registered.
    fs.mkdirSync(sidecarOutputDir, { recursive: true });
    const transcript = fs.createWriteStream(
      path.join(sidecarOutputDir, `${Date.now()}-${this.child.pid ?? 'unstarted'}.log`),
    );
    this.child.stdout?.on('data', (chunk: string | Buffer) => transcript.write(chunk));
    this.child.stderr?.on('data', (chunk: string | Buffer) => transcript.write(chunk));
    this.child.on('close', () => transcript.end());
    let buffer = '';
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        this.rawStdout.push(line);
        const message = parseSidecarLine(line);
        if (message) this.messages.push(message);
      }
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
      if (process.env.QS_SIDECAR_DEBUG) process.stderr.write(chunk);
    });
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => resolve({ code, signal })),
    );
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  of<T extends SidecarMessage['type']>(type: T): Extract<SidecarMessage, { type: T }>[] {
    return this.messages.filter((m): m is Extract<SidecarMessage, { type: T }> => m.type === type);
  }

  /** Waits for a line; fails with everything the sidecar said when it exits or times out first. */
  async waitFor<T extends SidecarMessage['type']>(
    type: T,
    accept: (m: Extract<SidecarMessage, { type: T }>) => boolean = () => true,
    timeoutMs = 30_000,
  ): Promise<Extract<SidecarMessage, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      const found = this.of(type).find(accept);
      if (found) return found;
      if (exited || Date.now() > deadline) {
        throw new Error(
          `sidecar: no matching "${type}" line (${exited ? 'it exited' : 'timeout'}).\nstdout:\n${this.rawStdout.join('\n')}\nstderr:\n${this.stderr}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Writes one line on its stdin (a protocol request). */
  send(line: string): void {
    this.child.stdin?.write(line.endsWith('\n') ? line : `${line}\n`);
  }

  /** SIGKILL if still running (test cleanup). */
  async ensureDead(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** Installs the QueueSplit CRD of deploy/crd/ under the suite's private group (or `group`), or
 * brings an existing one (from an earlier checkout) up to it. */
export async function ensureCrd(kc: KubeConfig, group = PRIVATE_GROUP): Promise<void> {
  const crds = kc.makeApiClient(ApiextensionsV1Api);
  const manifest = parseYaml(
    fs.readFileSync(path.join(repoRoot, 'deploy', 'crd', 'queuesplit.crd.yaml'), 'utf8'),
  ) as V1CustomResourceDefinition;
  if (manifest.spec.group !== QUEUE_SPLIT_GROUP)
    throw new Error(`deploy/crd has group ${manifest.spec.group}`);
  const name = `${QUEUE_SPLIT_PLURAL}.${group}`;
  const body = {
    ...manifest,
    metadata: { ...manifest.metadata, name },
    spec: { ...manifest.spec, group },
  };
  // Server-side apply: no resourceVersion to go stale, so files installing it side by side, and
  // the API server writing a new CRD's status meanwhile, never meet a 409 Conflict.
  await crds.patchCustomResourceDefinition(
    { name, body, fieldManager: 'queuesplit-sidecar-suite', force: true },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
  );
  await pollUntil(
    'QueueSplit CRD established',
    () => crds.readCustomResourceDefinition({ name }),
    (crd) => crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false,
  );
  // Discovery can lag "Established" by a moment.
  await pollUntil(
    'queuesplits served',
    () => kc.makeApiClient(CustomObjectsApi).listClusterCustomObject({ ...REF, group }),
    () => true,
  );
}

/**
 * A developer's kubeconfig: a service account with a Role in the namespace (secrets optional),
 * reaching the API server through the group proxy.
 */
export async function developerKubeconfig(
  admin: KubeConfig,
  namespace: string,
  name: string,
  canReadSecrets: boolean,
  proxyUrl: string,
): Promise<string> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const rules = [
    {
      apiGroups: [PRIVATE_GROUP],
      resources: [QUEUE_SPLIT_PLURAL],
      verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'],
    },
    { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: ['get'] },
    {
      apiGroups: [''],
      resources: canReadSecrets ? ['configmaps', 'secrets'] : ['configmaps'],
      verbs: ['get'],
    },
  ];
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
  const direct = path.join(runDir, `kubeconfig-${namespace}-${name}-direct`);
  await restrictedKubeconfig(admin, namespace, name, path.join(runDir, 'k8s', 'pki', 'ca.crt'), direct);
  const file = proxiedKubeconfig(direct, proxyUrl, path.join(runDir, `kubeconfig-${namespace}-${name}`));
  fs.rmSync(direct, { force: true });
  return file;
}

export const IN_CLUSTER_KAFKA = 'kafka.kafka.svc.cluster.local:9092';

export interface WorkloadSetup {
  name: string;
  /** The topic/queue the app consumes (the split's source). */
  ordersTopic: string;
  kafkaGroup: string;
  invoiceQueue: string;
}

/**
 * Deployment `name` (0 replicas: nothing runs) declaring a Kafka queue `orders` whose brokers
 * come from a ConfigMap with an in-cluster host name, and a RabbitMQ queue `invoices` whose URL
 * (with its password) comes from a Secret.
 */
export async function createWorkload(
  admin: KubeConfig,
  namespace: string,
  name: string,
  amqpUrl: string,
  suffix: string,
): Promise<WorkloadSetup> {
  const core = admin.makeApiClient(CoreV1Api);
  await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: `${name}-kafka` }, data: { brokers: IN_CLUSTER_KAFKA } },
  });
  await createSecret(admin, namespace, `${name}-rabbit`, { url: amqpUrl });
  const setup: WorkloadSetup = {
    name,
    ordersTopic: `orders-${suffix}`,
    kafkaGroup: `orders-app-${suffix}`,
    invoiceQueue: `invoices-${suffix}`,
  };
  const annotation = [
    'queues:',
    '  - name: orders',
    '    kafka: {brokersEnv: KAFKA_BROKERS, sourceEnv: ORDERS_TOPIC, groupEnv: KAFKA_GROUP, offsetReset: earliest}',
    '  - name: invoices',
    '    rabbitmq: {urlEnv: AMQP_URL, managementUrlEnv: RABBITMQ_MANAGEMENT_URL, sourceEnv: INVOICE_QUEUE}',
  ].join('\n');
  const deployment = fixtureDeployment({
    name,
    image: 'registry.k8s.io/pause',
    replicas: 0,
    annotations: { 'telepresence.io/queue-config': annotation },
    env: [
      { name: 'KAFKA_BROKERS', valueFrom: { configMapKeyRef: { name: `${name}-kafka`, key: 'brokers' } } },
      { name: 'ORDERS_TOPIC', value: setup.ordersTopic },
      { name: 'KAFKA_GROUP', value: setup.kafkaGroup },
      { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: `${name}-rabbit`, key: 'url' } } },
      { name: 'RABBITMQ_MANAGEMENT_URL', value: 'http://rabbitmq.rabbitmq.svc.cluster.local:15672' },
      { name: 'INVOICE_QUEUE', value: setup.invoiceQueue },
    ],
  });
  await admin.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body: deployment });
  return setup;
}

// ---- playing the controller ------------------------------------------------------------------

export const getSplit = (kc: KubeConfig, namespace: string, name: string) =>
  getSplitOf(kc, namespace, name, REF);

export async function listSplits(kc: KubeConfig, namespace: string): Promise<QueueSplit[]> {
  const list = (await kc
    .makeApiClient(CustomObjectsApi)
    .listNamespacedCustomObject({ ...REF, namespace })) as { items: QueueSplit[] };
  return list.items;
}

export async function patchStatus(
  kc: KubeConfig,
  namespace: string,
  name: string,
  status: Record<string, unknown>,
): Promise<void> {
  await kc
    .makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObjectStatus({ ...REF, namespace, name, body: { status } }, MERGE);
}

export async function patchMetadata(
  kc: KubeConfig,
  namespace: string,
  name: string,
  metadata: Record<string, unknown>,
): Promise<void> {
  await kc
    .makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObject({ ...REF, namespace, name, body: { metadata } }, MERGE);
}

export function condition(type: string, status: 'True' | 'False', reason: string, message: string) {
  return {
    type,
    status,
    reason,
    message,
    lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

/** What the controller writes for an active route. */
export async function activate(
  kc: KubeConfig,
  namespace: string,
  name: string,
  queues: QueueSplitQueueStatus[],
): Promise<void> {
  await patchStatus(kc, namespace, name, {
    phase: 'Preparing',
    conditions: [condition('Ready', 'False', 'CreatingShadows', 'Creating the session shadows.')],
  });
  await patchStatus(kc, namespace, name, {
    phase: 'Active',
    queues: queues.map((q) => ({ ...q, phase: 'Active' })),
    conditions: [condition('Ready', 'True', 'RouteActive', 'The route is active.')],
  });
}

/** Waits for the sidecar to name its split, then activates it like the controller would. */
export async function activateWhenAsked(
  kc: KubeConfig,
  sidecar: SidecarProcess,
  queues: QueueSplitQueueStatus[],
  /** Runs with the split before it is marked Active: an in-process agent told the route here
   * knows it before the sidecar can connect, as the controller's order guarantees (it marks a
   * split Active once the agent acked its route). */
  beforeActive?: (split: QueueSplit) => Promise<void>,
): Promise<QueueSplit> {
  const waiting = await sidecar.waitFor('progress', (m) => m.stage === 'waiting' && m.split !== undefined);
  const { name, namespace } = waiting.split!;
  if (beforeActive) await beforeActive((await getSplit(kc, namespace, name))!);
  await activate(kc, namespace, name, queues);
  return (await getSplit(kc, namespace, name))!;
}

// ---- playing the controller for an in-process queue-agent ---------------------------------------

/** The names of the env vars the in-process agent reads its broker connections from. */
export interface AgentBrokerEnv {
  brokers: string;
  amqp: string;
  managementUrl: string;
}

/**
 * The agent pod's env as the controller copies it (names in the plan, values in the env): set in
 * this process under `prefix`, where the in-process agent reads it.
 */
export function agentBrokerEnv(prefix: string, services: Services): AgentBrokerEnv {
  const env = { brokers: `${prefix}_BROKERS`, amqp: `${prefix}_AMQP`, managementUrl: `${prefix}_MGMT` };
  process.env[env.brokers] = services.kafkaBrokers.join(',');
  process.env[env.amqp] = services.amqpUrl;
  process.env[env.managementUrl] = services.rabbitManagementUrl;
  return env;
}

/** The desired document the controller would write for one route of `split` on `workload`. */
export function agentDesired(
  workload: WorkloadSetup,
  env: AgentBrokerEnv,
  split: QueueSplit,
  shadows: AgentRoute['shadows'],
  phase: AgentRoute['phase'] = 'ACTIVE',
): DesiredState {
  return {
    apiVersion: DESIRED_API_VERSION,
    activationId: 'test/uid',
    generation: 2,
    phase: 'ACTIVE',
    queues: [
      {
        name: 'orders',
        provider: 'kafka',
        source: workload.ordersTopic,
        group: workload.kafkaGroup,
        env: { brokers: env.brokers },
        epoch: 0,
        names: { appShadow: 'unused' },
      },
      {
        name: 'invoices',
        provider: 'rabbitmq',
        source: workload.invoiceQueue,
        env: { url: env.amqp, managementUrl: env.managementUrl },
        epoch: 0,
        names: { appShadow: 'unused' },
      },
    ],
    routes: [
      {
        routeId: split.spec.routeId,
        filter: specFilter(split.spec),
        queues: split.spec.queues,
        phase,
        generation: 2,
        shadows,
        ...(split.spec.session?.publicKey ? { publicKey: split.spec.session.publicKey } : {}),
      },
    ],
  };
}
