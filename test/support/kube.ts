// Helpers for tests against the local control plane: an admin client, throwaway namespaces,
// and waits that read real pod and process state.
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  type V1Deployment,
  type V1Pod,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import {
  restrictedContainerSecurityContext,
  restrictedNamespaceLabels,
  restrictedPodSecurityContext,
} from '../../core/podSecurity';
import { runDir } from '../env/paths';
import { containerPid } from '../env/k8s/node/realNode';
import { snapshotNamespace } from './leakScan';
import { pollUntil } from './poll';
import { uniqueName } from './services';

// The admin client and the fixture apps' records come from fixtures/env/, which the demo reads too.
export { adminConfig } from '../../fixtures/env/kube';
export { records } from '../../fixtures/env/records';

/** A throwaway namespace that enforces PodSecurity `restricted`, as a hardened cluster would. */
export async function createNamespace(kc: KubeConfig, prefix: string): Promise<string> {
  const name = uniqueName(prefix).toLowerCase().slice(0, 63);
  await kc
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name, labels: restrictedNamespaceLabels } } });
  // Pods need the namespace's default service account, made by the controller-manager.
  await pollUntil(
    `service account default in ${name}`,
    () => kc.makeApiClient(CoreV1Api).readNamespacedServiceAccount({ name: 'default', namespace: name }),
    () => true,
  );
  return name;
}

/** Deletes a test namespace, first keeping what it holds for the leak scan (test/support/leakScan.ts). */
export async function deleteNamespace(kc: KubeConfig, name: string): Promise<void> {
  await snapshotNamespace(kc, name, runDir);
  await kc
    .makeApiClient(CoreV1Api)
    .deleteNamespace({ name })
    .catch(() => undefined);
}

export async function podsOf(kc: KubeConfig, namespace: string, app: string): Promise<V1Pod[]> {
  const list = await kc
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace, labelSelector: `app=${app}` });
  return list.items;
}

/** The host pid of a pod's (first) container, as containerd runs it on the real node. */
export async function hostPidOf(pod: V1Pod): Promise<number | undefined> {
  const id = pod.status?.containerStatuses?.[0]?.containerID;
  return id?.startsWith('containerd://') ? containerPid(id) : undefined;
}

export async function waitForReadyPods(
  kc: KubeConfig,
  namespace: string,
  app: string,
  count: number,
): Promise<V1Pod[]> {
  return pollUntil(
    `${count} ready, non-terminating pods of ${namespace}/${app}`,
    async () => (await podsOf(kc, namespace, app)).filter((p) => !p.metadata?.deletionTimestamp),
    (pods) =>
      pods.length === count &&
      pods.every((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')),
    60_000,
  );
}

export async function waitForNoPods(kc: KubeConfig, namespace: string, app: string): Promise<void> {
  await pollUntil(
    `no pods of ${namespace}/${app}`,
    () => podsOf(kc, namespace, app),
    (pods) => pods.length === 0,
    60_000,
  );
}

export async function scale(
  kc: KubeConfig,
  namespace: string,
  name: string,
  replicas: number,
): Promise<void> {
  await kc.makeApiClient(AppsV1Api).replaceNamespacedDeploymentScale({
    name,
    namespace,
    body: { metadata: { name, namespace }, spec: { replicas } },
  });
}

export function fixtureDeployment(options: {
  name: string;
  image: string;
  replicas: number;
  env: NonNullable<NonNullable<V1Deployment['spec']>['template']['spec']>['containers'][number]['env'];
  annotations?: Record<string, string>;
}): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: options.name, annotations: options.annotations },
    spec: {
      replicas: options.replicas,
      selector: { matchLabels: { app: options.name } },
      template: {
        metadata: { labels: { app: options.name } },
        spec: {
          terminationGracePeriodSeconds: 10,
          // Test namespaces enforce PodSecurity `restricted`: the fixtures comply like the agent.
          securityContext: restrictedPodSecurityContext,
          containers: [
            {
              name: 'app',
              image: options.image,
              // Imported into the real node, never pulled (an untagged name means :latest).
              imagePullPolicy: 'IfNotPresent',
              env: options.env,
              securityContext: restrictedContainerSecurityContext,
            },
          ],
        },
      },
    },
  };
}

/** The same workload as a StatefulSet (pods started in parallel; the service name is nominal). */
export function asStatefulSet(deployment: V1Deployment): V1StatefulSet {
  const { replicas, selector, template } = deployment.spec!;
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: deployment.metadata,
    spec: {
      replicas,
      selector,
      template,
      serviceName: deployment.metadata!.name!,
      podManagementPolicy: 'Parallel',
    },
  };
}
