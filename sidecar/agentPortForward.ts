// Reaching the workload's queue-agent from this machine through the Kubernetes API's
// port-forward (@kubernetes/client-node, no kubectl): a loopback listener whose connections are
// each forwarded to the agent pod's HTTP port. Only the API server is dialled, with the
// developer's own credentials (`list pods` and `create pods/portforward`, docs: README "The
// developer role"); no broker address is.
import * as net from 'node:net';
import { CoreV1Api, PortForward, type V1Pod } from '@kubernetes/client-node';
import type { WorkloadRef } from '../core/crd/queueSplitSchema';
import { AGENT_HTTP_PORT, AGENT_HTTP_PORT_NAME, SESSION_PATH } from '../core/sessionStream';
import { SidecarError } from './errors';
import { kubeError, type KubeTarget } from './kube';

/** Where the session stream connects: a port-forward opened for it, or a URL given with --agent-url. */
export interface AgentEndpoint {
  open(): Promise<{ url: string; describe: string; close(): void }>;
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
      const pod = pods.find(ready);
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
        close: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      };
    },
  };
}
