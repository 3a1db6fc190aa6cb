// The per-workload queue-agent Deployment as the controller creates it (docs/design.md §2): one replica,
// Recreate, non-root (numeric UID) with a read-only root filesystem and what PodSecurity
// `restricted` asks (core/podSecurity.ts), probed on /healthz and /readyz, env copied as references (literal,
// configMapKeyRef, secretKeyRef) for exactly the connection variables the validated declaration
// names, and read-only mounts of exactly the CA Secret keys it names. Pure, so unit tests can
// check the pod spec; the controller never reads a Secret value.
import type { V1Deployment, V1EnvVar, V1Toleration } from '@kubernetes/client-node';
import { AGENT_POD_LABEL, type KubernetesObjectNames } from '../../core/names';
import type { ResolvedQueue } from '../../core/queueConfig/resolveQueues';
import {
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  agentProbes,
} from '../../core/podSecurity';
import { AGENT_HTTP_PORT, AGENT_HTTP_PORT_NAME } from '../../core/sessionStream';
import type { EngineSettings } from '../providers/contract';
import { brokerSettings } from '../../core/providers/registry';
import { tlsMounts } from './tlsMounts';

/** Where queue-agent pods may run: the controller's --agent-node-selector / --agent-tolerations. */
export interface AgentPlacement {
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
}

export interface AgentSettings {
  image: string;
  /** Where the seals are (agent/controller/stateSeal.ts): the agent checks its desired document there. */
  controllerNamespace: string;
  placement?: AgentPlacement;
  /** 0 lets the agent pick a free port (pods that share a host network); probes then use the default. */
  metricsPort: number;
  /** The providers' broker settings, passed on to every queue-agent; absent or the default adds
   * no argument (pod templates of existing agents stay as they are). */
  engineSettings?: EngineSettings;
  /** Namespace labels whose pods may reach the agents' metrics port (agentNetworkPolicy.ts). */
  metricsFrom?: Record<string, string>;
}

export const AGENT_LABEL = 'queuesplit.dev/component';

/**
 * Node flags of the queue-agent process (not of the controller, which shares the image): a 1 MiB
 * young generation. The agent's allocations live long (routes, connections) or very short
 * (messages in flight); V8's default young generation grew to tens of MiB and stayed there. Measured
 * with test/bench/queue-agent-memory.bench.ts at 1,000 routes on the image's Node 24: RSS with
 * routes ACTIVE 256–268 → 207 MiB, after a backlog 291–307 → 210, peak 293–308 → 212; the RabbitMQ
 * engine's throughput unchanged within the runs' spread (rabbitmq-engine.bench.ts, README).
 * `--optimize-for-size` took RSS to 135 MiB but cost the engine 30–35% of its throughput: not set.
 */
export const QUEUE_AGENT_NODE_OPTIONS = '--max-semi-space-size=1';

/** The queue-agent's metrics, health and session port unless the controller is told otherwise. */
export const DEFAULT_METRICS_PORT = AGENT_HTTP_PORT;

export function queueAgentDeployment(
  settings: AgentSettings,
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
  const tls = tlsMounts(resolved);
  env.push(...tls.env);
  // Session proofs name the pod they were made for (core/sessionSecret.ts).
  env.push({ name: 'QS_POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } });
  env.push({ name: 'NODE_OPTIONS', value: QUEUE_AGENT_NODE_OPTIONS });
  const selector = { [AGENT_LABEL]: 'queue-agent', [AGENT_POD_LABEL]: names.agentDeployment };
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
          ...(settings.placement?.nodeSelector ? { nodeSelector: settings.placement.nodeSelector } : {}),
          ...(settings.placement?.tolerations ? { tolerations: settings.placement.tolerations } : {}),
          securityContext: restrictedPodSecurityContext,
          ...(tls.volumes.length > 0 ? { volumes: tls.volumes } : {}),
          containers: [
            {
              name: 'agent',
              image: settings.image,
              args: [
                'queue-agent',
                `--namespace=${namespace}`,
                `--desired=${names.stateConfigMap}`,
                `--seal=${settings.controllerNamespace}/${names.stateSeal}`,
                `--observed=${names.agentStatusConfigMap}`,
                `--metrics-port=${settings.metricsPort}`,
                ...brokerSettings().flatMap((setting) => {
                  const value = settings.engineSettings?.[setting.flag];
                  return value !== undefined && value !== setting.default
                    ? [`--${setting.flag}=${value}`]
                    : [];
                }),
              ],
              env,
              ...(tls.volumeMounts.length > 0 ? { volumeMounts: tls.volumeMounts } : {}),
              ports:
                settings.metricsPort > 0
                  ? [{ name: AGENT_HTTP_PORT_NAME, containerPort: settings.metricsPort }]
                  : [],
              // Port 0 (pods that share the host's network) lets the agent pick a free port; the
              // probes and the session stream then need the default port, so it is for special setups.
              ...agentProbes(settings.metricsPort > 0 ? settings.metricsPort : DEFAULT_METRICS_PORT),
              securityContext: restrictedContainerSecurityContext,
              resources: {
                requests: { cpu: '50m', memory: '128Mi' },
                limits: { cpu: '1', memory: '512Mi' },
              },
            },
          ],
        },
      },
    },
  };
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
