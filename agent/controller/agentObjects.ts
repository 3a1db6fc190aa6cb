// The per-workload queue-agent: a ServiceAccount that may read only its desired ConfigMap (and,
// in the controller's namespace, that document's seal) and write only its status ConfigMap, and a one-replica Recreate Deployment in the workload's
// namespace whose env copies (as references) exactly the connection variables the validated
// declaration names. The controller never reads a Secret value.
import {
  AppsV1Api,
  CoreV1Api,
  NetworkingV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1Deployment,
  type V1NetworkPolicy,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import type { KubernetesObjectNames } from '../../core/names';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import { isConflict, isNotFound } from '../kube/client';
import { AGENT_LABEL, queueAgentDeployment, type AgentSettings } from './agentDeployment';
import { queueAgentNetworkPolicy } from './agentNetworkPolicy';
import { agentTrouble, type AgentTrouble } from './podHealth';

export type { AgentSettings };

/**
 * What agent/queueAgent/main.ts calls in its namespace: it reads its desired document (watched by
 * name, so a change wakes it at once; polled as the fallback) and replaces its status.
 */
export function agentRoleRules(
  names: Pick<KubernetesObjectNames, 'stateConfigMap' | 'agentStatusConfigMap'>,
): V1PolicyRule[] {
  return [
    {
      apiGroups: [''],
      resources: ['configmaps'],
      resourceNames: [names.stateConfigMap],
      verbs: ['get', 'watch'],
    },
    {
      apiGroups: [''],
      resources: ['configmaps'],
      resourceNames: [names.agentStatusConfigMap],
      verbs: ['get', 'update'],
    },
  ];
}

/**
 * What decides the agent pod: its image and args (a controller upgrade or a fixed
 * `--agent-image`), the env references and Secret key mounts it copies from the workload.
 */
function copiedMaterial(d: V1Deployment): string {
  const spec = d.spec?.template.spec;
  const c = spec?.containers[0];
  return JSON.stringify([
    c?.image,
    c?.args,
    c?.env,
    c?.volumeMounts ?? [],
    spec?.volumes ?? [],
    spec?.nodeSelector ?? {},
    spec?.tolerations ?? [],
  ]);
}

/** The pod-template annotation a retry sets to roll the agent (as `kubectl rollout restart` does). */
const RESTARTED_AT = 'queuesplit.dev/restarted-at';

export class AgentObjects {
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly rbac: RbacAuthorizationV1Api;
  private readonly networking: NetworkingV1Api;

  constructor(
    kc: KubeConfig,
    private readonly settings: AgentSettings,
  ) {
    this.apps = kc.makeApiClient(AppsV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
    this.rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    this.networking = kc.makeApiClient(NetworkingV1Api);
  }

  /**
   * Creates or brings up to date the queue-agent's objects. `restart`: roll its pods even when
   * nothing changed (an operator's retry): a new ReplicaSet creates its pod at once, where the
   * old one may sit in a pod-creation back-off of minutes after refusals since fixed.
   */
  async ensure(
    namespace: string,
    names: KubernetesObjectNames,
    workload: string,
    resolved: readonly ResolvedQueue[],
    restart = false,
  ) {
    const labels = { [AGENT_LABEL]: 'queue-agent', 'queuesplit.dev/workload': workload };
    await ignoreConflict(() =>
      this.core.createNamespacedServiceAccount({
        namespace,
        body: { metadata: { name: names.agentServiceAccount, labels } },
      }),
    );
    await ignoreConflict(() =>
      this.core.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name: names.agentStatusConfigMap, labels }, data: {} },
      }),
    );
    await ignoreConflict(() =>
      this.rbac.createNamespacedRole({
        namespace,
        body: {
          metadata: { name: names.agentServiceAccount, labels },
          rules: agentRoleRules(names),
        },
      }),
    );
    await ignoreConflict(() =>
      this.rbac.createNamespacedRoleBinding({
        namespace,
        body: {
          metadata: { name: names.agentServiceAccount, labels },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.agentServiceAccount },
          subjects: [{ kind: 'ServiceAccount', name: names.agentServiceAccount, namespace }],
        },
      }),
    );
    await this.ensureSealReader(namespace, names, workload);
    await this.ensureNetworkPolicy(namespace, names, labels);
    const body = queueAgentDeployment(this.settings, namespace, names, labels, resolved);
    if (restart) body.spec!.template.metadata!.annotations = { [RESTARTED_AT]: new Date().toISOString() };
    try {
      const current = await this.apps.readNamespacedDeployment({ name: names.agentDeployment, namespace });
      if (restart || copiedMaterial(current) !== copiedMaterial(body)) {
        body.metadata!.resourceVersion = current.metadata?.resourceVersion;
        await this.apps.replaceNamespacedDeployment({ name: names.agentDeployment, namespace, body });
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.apps.createNamespacedDeployment({ namespace, body });
    }
  }

  /**
   * A Role and RoleBinding in the controller's namespace that let this queue-agent get its seal
   * (and nothing else there): it refuses a desired document the seal does not list.
   */
  private async ensureSealReader(namespace: string, names: KubernetesObjectNames, workload: string) {
    const home = this.settings.controllerNamespace;
    const labels = {
      [AGENT_LABEL]: 'seal-reader',
      'queuesplit.dev/workload': workload,
      'queuesplit.dev/workload-namespace': namespace,
    };
    await ignoreConflict(() =>
      this.rbac.createNamespacedRole({
        namespace: home,
        body: {
          metadata: { name: names.stateSeal, labels },
          rules: [
            { apiGroups: [''], resources: ['configmaps'], resourceNames: [names.stateSeal], verbs: ['get'] },
          ],
        },
      }),
    );
    await ignoreConflict(() =>
      this.rbac.createNamespacedRoleBinding({
        namespace: home,
        body: {
          metadata: { name: names.stateSeal, labels },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.stateSeal },
          subjects: [{ kind: 'ServiceAccount', name: names.agentServiceAccount, namespace }],
        },
      }),
    );
  }

  /** Before the agent's pod: no moment where its port is open to the pod network. */
  private async ensureNetworkPolicy(
    namespace: string,
    names: KubernetesObjectNames,
    labels: Record<string, string>,
  ) {
    const body = queueAgentNetworkPolicy(this.settings, namespace, names, labels);
    try {
      const current = await this.networking.readNamespacedNetworkPolicy({
        name: names.agentDeployment,
        namespace,
      });
      if (policyRules(current) === policyRules(body)) return;
      body.metadata!.resourceVersion = current.metadata?.resourceVersion;
      await this.networking.replaceNamespacedNetworkPolicy({ name: names.agentDeployment, namespace, body });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await ignoreConflict(() => this.networking.createNamespacedNetworkPolicy({ namespace, body }));
    }
  }

  /** The seal reader goes with the agent, and with a namespace deleted during a split. */
  async removeSealReader(names: KubernetesObjectNames): Promise<void> {
    const namespace = this.settings.controllerNamespace;
    await gone(this.rbac.deleteNamespacedRoleBinding({ name: names.stateSeal, namespace }));
    await gone(this.rbac.deleteNamespacedRole({ name: names.stateSeal, namespace }));
  }

  async agentReady(namespace: string, names: KubernetesObjectNames): Promise<boolean> {
    try {
      const d = await this.apps.readNamespacedDeployment({ name: names.agentDeployment, namespace });
      return (d.status?.readyReplicas ?? 0) >= 1;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /**
   * Why the queue-agent is not running ready (undefined when it is), from its Deployment's
   * conditions, its pods' statuses and their newest Warning events (read only when unready).
   */
  async trouble(namespace: string, names: KubernetesObjectNames): Promise<AgentTrouble | undefined> {
    let conditions: { type: string; status: string; reason?: string; message?: string }[];
    try {
      const d = await this.apps.readNamespacedDeployment({ name: names.agentDeployment, namespace });
      conditions = d.status?.conditions ?? [];
    } catch (err) {
      if (isNotFound(err))
        return { permanent: false, cause: 'the queue-agent Deployment does not exist yet' };
      throw err;
    }
    const pods = (
      await this.core.listNamespacedPod({
        namespace,
        labelSelector: `queuesplit.dev/agent=${names.agentDeployment}`,
      })
    ).items;
    const quick = agentTrouble({ conditions, pods, warnings: new Map() });
    if (!quick) return undefined;
    const warnings = new Map<string, string>();
    for (const pod of pods) {
      const name = pod.metadata?.name ?? '';
      const events = await this.core.listNamespacedEvent({
        namespace,
        fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${name},type=Warning`,
      });
      const when = (e: (typeof events.items)[number]) =>
        new Date(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? 0).getTime();
      const newest = events.items.sort((a, b) => when(b) - when(a))[0];
      if (newest?.message) warnings.set(name, `${newest.reason}: ${newest.message}`);
    }
    return agentTrouble({ conditions, pods, warnings });
  }

  async reap(namespace: string, names: KubernetesObjectNames): Promise<void> {
    await gone(this.apps.deleteNamespacedDeployment({ name: names.agentDeployment, namespace }));
    await gone(this.rbac.deleteNamespacedRoleBinding({ name: names.agentServiceAccount, namespace }));
    await gone(this.rbac.deleteNamespacedRole({ name: names.agentServiceAccount, namespace }));
    await gone(this.core.deleteNamespacedServiceAccount({ name: names.agentServiceAccount, namespace }));
    await gone(this.core.deleteNamespacedConfigMap({ name: names.agentStatusConfigMap, namespace }));
    await gone(this.networking.deleteNamespacedNetworkPolicy({ name: names.agentDeployment, namespace }));
    await this.removeSealReader(names);
  }
}

/** What a NetworkPolicy admits, in a form that ignores key order and server defaults. */
const policyRules = (p: V1NetworkPolicy) =>
  JSON.stringify([
    p.spec?.podSelector?.matchLabels,
    p.spec?.policyTypes,
    (p.spec?.ingress ?? []).map((r) => [
      (r._from ?? []).map((f) => f.namespaceSelector?.matchLabels),
      (r.ports ?? []).map((port) => [port.protocol, port.port]),
    ]),
  ]);

const gone = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)),
  );

async function ignoreConflict(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}
