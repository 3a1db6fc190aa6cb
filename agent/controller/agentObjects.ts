// The per-workload queue-agent: a ServiceAccount that may read only its desired ConfigMap and
// write only its status ConfigMap, and a one-replica Recreate Deployment in the workload's
// namespace whose env copies (as references) exactly the connection variables the validated
// declaration names. The controller never reads a Secret value.
import {
  AppsV1Api,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1Deployment,
  type V1EnvVar,
} from '@kubernetes/client-node';
import type { KubernetesObjectNames } from '../../core/names';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import { isConflict, isNotFound } from '../kube/client';

export interface AgentSettings {
  image: string;
  /** 0 lets the agent pick a free port (the test kubelet runs every pod on one host). */
  metricsPort: number;
}

const AGENT_LABEL = 'queuesplit.dev/component';

export class AgentObjects {
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly rbac: RbacAuthorizationV1Api;

  constructor(
    kc: KubeConfig,
    private readonly settings: AgentSettings,
  ) {
    this.apps = kc.makeApiClient(AppsV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
    this.rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  }

  async ensure(
    namespace: string,
    names: KubernetesObjectNames,
    workload: string,
    resolved: readonly ResolvedQueue[],
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
          rules: [
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
              verbs: ['get', 'update', 'patch'],
            },
          ],
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
    const body = this.deployment(namespace, names, labels, resolved);
    try {
      const current = await this.apps.readNamespacedDeployment({ name: names.agentDeployment, namespace });
      if (
        JSON.stringify(current.spec?.template.spec?.containers[0]?.env) !==
        JSON.stringify(body.spec?.template.spec?.containers[0]?.env)
      ) {
        body.metadata!.resourceVersion = current.metadata?.resourceVersion;
        await this.apps.replaceNamespacedDeployment({ name: names.agentDeployment, namespace, body });
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.apps.createNamespacedDeployment({ namespace, body });
    }
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

  async reap(namespace: string, names: KubernetesObjectNames): Promise<void> {
    const gone = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)),
      );
    await gone(this.apps.deleteNamespacedDeployment({ name: names.agentDeployment, namespace }));
    await gone(this.rbac.deleteNamespacedRoleBinding({ name: names.agentServiceAccount, namespace }));
    await gone(this.rbac.deleteNamespacedRole({ name: names.agentServiceAccount, namespace }));
    await gone(this.core.deleteNamespacedServiceAccount({ name: names.agentServiceAccount, namespace }));
    await gone(this.core.deleteNamespacedConfigMap({ name: names.agentStatusConfigMap, namespace }));
  }

  private deployment(
    namespace: string,
    names: KubernetesObjectNames,
    labels: Record<string, string>,
    resolved: readonly ResolvedQueue[],
  ): V1Deployment {
    const env: V1EnvVar[] = [];
    const seen = new Map<string, string>();
    for (const q of resolved) {
      for (const copied of q.env) {
        const entry = toEnvVar(copied.name, copied.source);
        const key = JSON.stringify(entry);
        const prior = seen.get(copied.name);
        if (prior === undefined) {
          seen.set(copied.name, key);
          env.push(entry);
        } else if (prior !== key) {
          throw new Error(
            `env ${copied.name} means different things in two containers; give the queues distinct variable names`,
          );
        }
      }
    }
    const selector = { [AGENT_LABEL]: 'queue-agent', 'queuesplit.dev/agent': names.agentDeployment };
    return {
      metadata: { name: names.agentDeployment, namespace, labels },
      spec: {
        replicas: 1,
        strategy: { type: 'Recreate' }, // never two agents on one source
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: { ...labels, ...selector } },
          spec: {
            serviceAccountName: names.agentServiceAccount,
            terminationGracePeriodSeconds: 30,
            containers: [
              {
                name: 'agent',
                image: this.settings.image,
                args: [
                  'queue-agent',
                  `--namespace=${namespace}`,
                  `--desired=${names.stateConfigMap}`,
                  `--observed=${names.agentStatusConfigMap}`,
                  `--metrics-port=${this.settings.metricsPort}`,
                ],
                env,
                ports:
                  this.settings.metricsPort > 0
                    ? [{ name: 'metrics', containerPort: this.settings.metricsPort }]
                    : [],
                securityContext: {
                  runAsNonRoot: true,
                  readOnlyRootFilesystem: true,
                  allowPrivilegeEscalation: false,
                },
                resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } },
              },
            ],
          },
        },
      },
    };
  }
}

function toEnvVar(name: string, source: ResolvedQueue['env'][number]['source']): V1EnvVar {
  switch (source.kind) {
    case 'value':
      return { name, value: source.value };
    case 'configMapKeyRef':
      return {
        name,
        valueFrom: {
          configMapKeyRef: { name: source.configMap, key: source.key, optional: source.optional },
        },
      };
    case 'secretKeyRef':
      return {
        name,
        valueFrom: { secretKeyRef: { name: source.secret, key: source.key, optional: source.optional } },
      };
  }
}

async function ignoreConflict(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}
