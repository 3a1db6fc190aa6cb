// The pod and container security settings both agent pods (controller and queue-agent) carry:
// what PodSecurity `restricted` requires and a real kubelet accepts for an image whose USER is
// numeric (deploy/Dockerfile). One source, so the two specs and the Dockerfile cannot drift.
import type { V1PodSecurityContext, V1Probe, V1SecurityContext } from '@kubernetes/client-node';

/** PodSecurity admission enforces (and warns and audits) `restricted` in a namespace with these. */
export const restrictedNamespaceLabels = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/warn': 'restricted',
  'pod-security.kubernetes.io/audit': 'restricted',
};

/** The image's `node` user and group, numeric (deploy/Dockerfile says `USER 1000:1000`). */
export const AGENT_UID = 1000;
export const AGENT_GID = 1000;

export const restrictedPodSecurityContext: V1PodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: AGENT_UID,
  runAsGroup: AGENT_GID,
  seccompProfile: { type: 'RuntimeDefault' },
};

export const restrictedContainerSecurityContext: V1SecurityContext = {
  runAsNonRoot: true,
  runAsUser: AGENT_UID,
  runAsGroup: AGENT_GID,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

/** Liveness on /healthz and readiness on /readyz, both served by agent/healthServer.ts. */
export function agentProbes(port: number): { livenessProbe: V1Probe; readinessProbe: V1Probe } {
  return {
    livenessProbe: {
      httpGet: { path: '/healthz', port },
      initialDelaySeconds: 5,
      periodSeconds: 10,
      timeoutSeconds: 2,
      failureThreshold: 3,
    },
    readinessProbe: {
      httpGet: { path: '/readyz', port },
      periodSeconds: 2,
      timeoutSeconds: 2,
      failureThreshold: 3,
    },
  };
}

/** The controller's /healthz and /readyz port unless told otherwise (`--health-port`). */
export const CONTROLLER_HEALTH_PORT = 8081;
