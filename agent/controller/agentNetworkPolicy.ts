// The queue-agent's NetworkPolicy (README "Trust boundaries"): nothing needs to reach a
// queue-agent over the pod network. Its session stream arrives by port-forward (on the pod's
// loopback, which NetworkPolicy does not filter) and the kubelet's probes come from the node
// (always admitted); so ingress is closed, except the metrics port from the namespaces the
// install names (`--agent-metrics-from`, e.g. where Prometheus runs). Egress stays open: the
// brokers and the API server it must reach are the workload's own, wherever they are.
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { AGENT_POD_LABEL, type KubernetesObjectNames } from '../../core/names';

export interface AgentNetworkSettings {
  metricsPort: number;
  /** Namespace labels whose pods may scrape the agents' metrics; none: no ingress at all. */
  metricsFrom?: Record<string, string>;
}

export function queueAgentNetworkPolicy(
  settings: AgentNetworkSettings,
  namespace: string,
  names: KubernetesObjectNames,
  labels: Record<string, string>,
): V1NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: names.agentDeployment, namespace, labels },
    spec: {
      podSelector: { matchLabels: { [AGENT_POD_LABEL]: names.agentDeployment } },
      policyTypes: ['Ingress'],
      ingress: settings.metricsFrom
        ? [
            {
              // client-node's name for `from` (a reserved word); serialised as `from`.
              _from: [{ namespaceSelector: { matchLabels: settings.metricsFrom } }],
              // Port 0 (the agent picks one): the port is not known, so the rule names none.
              ...(settings.metricsPort > 0
                ? { ports: [{ protocol: 'TCP', port: settings.metricsPort }] }
                : {}),
            },
          ]
        : [],
    },
  };
}
