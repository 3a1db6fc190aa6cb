// Reaching the workload's queue-agent from this machine through the Kubernetes API's
// port-forward (@kubernetes/client-node, no kubectl): a loopback listener whose connections are
// each forwarded to the agent pod's HTTP port. Only the API server is dialled, with the
// developer's own credentials (`list pods` and `create pods/portforward`, docs: README "The
// developer role"); no broker address is.
import * as net from 'node:net';
import { AppsV1Api, CoreV1Api, PortForward, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import { AGENT_POD_LABEL } from '../core/names';
import type { WorkloadRef } from '../core/crd/queueSplitSchema';
import { AGENT_HTTP_PORT, AGENT_HTTP_PORT_NAME, SESSION_PATH } from '../core/sessionStream';
import { notTheAgent } from './agentPod';
import { SidecarError } from '../laptop/errors';
import { kubeError, type KubeTarget } from '../laptop/kube';

/** Where the session stream connects: a port-forward opened for it, or a URL given with --agent-url. */
export interface AgentEndpoint {
  /** `podUid`: the pod the connection reaches, when known; its challenge must name it.
   * `skipped`: pods with the queue-agent's labels that are not it, each with why. */
  open(): Promise<{ url: string; describe: string; podUid?: string; skipped?: string[]; close(): void }>;
}

export const fixedEndpoint = (url: string): AgentEndpoint => ({
  open: () => Promise.resolve({ url, describe: url, close: () => undefined }),
});

const ready = (p: V1Pod) =>
  !p.metadata?.deletionTimestamp &&
  p.status?.phase === 'Running' &&
  (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** The queue-agent pods of a workload carry these labels (agent/controller/agentObjects.ts). */
export const agentPodSelector = (workload: WorkloadRef) =>
  `queuesplit.dev/component=queue-agent,queuesplit.dev/workload=${workload.name}`;

async function readDeployment(kube: KubeTarget, name: string): Promise<V1Deployment | undefined> {
  try {
    return await kube.kc
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name, namespace: kube.namespace });
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw kubeError(
      err,
      {
        verb: 'get',
        resource: 'deployments',
        namespace: kube.namespace,
        purpose: 'to check the queue-agent pod is its',
      },
      kube.context,
    );
  }
}

export function portForwardEndpoint(kube: KubeTarget, workload: WorkloadRef): AgentEndpoint {
  return {
    async open() {
      let pods: V1Pod[];
      try {
        pods = (
          await kube.kc
            .makeApiClient(CoreV1Api)
            .listNamespacedPod({ namespace: kube.namespace, labelSelector: agentPodSelector(workload) })
        ).items;
      } catch (err) {
        throw kubeError(
          err,
          {
            verb: 'list',
            resource: 'pods',
            namespace: kube.namespace,
            purpose: "to find the workload's queue-agent",
          },
          kube.context,
        );
      }
      // Only pods run by the queue-agent's Deployment (./agentPod.ts); look-alikes are named.
      const deployments = new Map<string, V1Deployment | undefined>();
      const impostors: string[] = [];
      let pod: V1Pod | undefined;
      for (const candidate of pods.filter(ready)) {
        const agent = candidate.metadata?.labels?.[AGENT_POD_LABEL] ?? '';
        if (agent && !deployments.has(agent)) deployments.set(agent, await readDeployment(kube, agent));
        const problem = notTheAgent(candidate, deployments.get(agent));
        if (problem === undefined) {
          pod = candidate;
          break;
        }
        impostors.push(`${candidate.metadata?.name} (${problem})`);
      }
      if (!pod && impostors.length > 0) {
        // Retried like an agent that is restarting (it may be), never connected to.
        throw new SidecarError(
          'agent-unreachable',
          `No ready queue-agent pod of ${workload.kind}/${workload.name} in namespace ${kube.namespace}; pod ${impostors.join(', ')} carries its labels but is not the queue-agent, and nothing was sent to it.`,
          `The sidecar retries. Tell whoever runs namespace ${kube.namespace} about the look-alike: \`kubectl -n ${kube.namespace} get pods -l ${agentPodSelector(workload)}\`.`,
        );
      }
      if (!pod) {
        throw new SidecarError(
          'agent-unreachable',
          `No ready queue-agent pod of ${workload.kind}/${workload.name} in namespace ${kube.namespace} (${pods.length} found).`,
          `It may be restarting: the sidecar retries. If it stays, check \`kubectl -n ${kube.namespace} get pods -l ${agentPodSelector(workload)}\` and the split's status.`,
        );
      }
      const name = pod.metadata!.name!;
      const port =
        pod.spec?.containers[0]?.ports?.find((p) => p.name === AGENT_HTTP_PORT_NAME)?.containerPort ??
        AGENT_HTTP_PORT;
      const forward = new PortForward(kube.kc);
      const sockets = new Set<net.Socket>();
      const server = net.createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
        forward.portForward(kube.namespace, name, [port], socket, null, socket).then(
          (ws) => {
            // client-node returns the WebSocket (or a getter when retrying): its end ends the socket.
            const sock = typeof ws === 'function' ? ws() : ws;
            sock?.on('close', () => socket.destroy());
            sock?.on('error', () => socket.destroy());
          },
          () => socket.destroy(),
        );
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
      const local = (server.address() as net.AddressInfo).port;
      return {
        url: `ws://127.0.0.1:${local}${SESSION_PATH}`,
        describe: `queue-agent pod ${name} (port-forward through the API server)`,
        ...(pod.metadata?.uid ? { podUid: pod.metadata.uid } : {}),
        ...(impostors.length > 0 ? { skipped: impostors } : {}),
        close: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      };
    },
  };
}
