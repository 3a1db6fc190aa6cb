// Waiting for a workload to be handed back (or rolled back) as a user would check it: the
// original env literals in the pod template, the wanted replica count, no handback finalizer,
// no override generation, and that many ready pods.
import { AppsV1Api, type KubeConfig, type V1Deployment, type V1StatefulSet } from '@kubernetes/client-node';
import { WORKLOAD_STATUS_ANNOTATION } from '../../core/workloadStatus';
import { parseWorkloadStatus } from '../../core/workloadStatusParse';
import { waitForReadyPods } from './kube';
import { pollUntil } from './poll';

export interface ExpectedEnv {
  container: string;
  name: string;
  value: string;
}

export async function readWorkload(
  kc: KubeConfig,
  kind: 'Deployment' | 'StatefulSet',
  namespace: string,
  name: string,
): Promise<V1Deployment | V1StatefulSet> {
  const apps = kc.makeApiClient(AppsV1Api);
  return kind === 'Deployment'
    ? apps.readNamespacedDeployment({ name, namespace })
    : apps.readNamespacedStatefulSet({ name, namespace });
}

/** The workload-level split status the controller publishes (core/workloadStatus.ts), parsed. */
export async function readWorkloadStatus(
  kc: KubeConfig,
  kind: 'Deployment' | 'StatefulSet',
  namespace: string,
  name: string,
) {
  const w = await readWorkload(kc, kind, namespace, name);
  return parseWorkloadStatus(w.metadata?.annotations?.[WORKLOAD_STATUS_ANNOTATION]);
}

export function envOf(workload: V1Deployment | V1StatefulSet, container: string, name: string) {
  return workload.spec?.template.spec?.containers
    .find((c) => c.name === container)
    ?.env?.find((e) => e.name === name)?.value;
}

export async function waitForHandback(
  kc: KubeConfig,
  options: {
    kind: 'Deployment' | 'StatefulSet';
    namespace: string;
    name: string;
    env: readonly ExpectedEnv[];
    replicas: number;
    timeoutMs?: number;
  },
): Promise<void> {
  const { kind, namespace, name } = options;
  await pollUntil(
    `${kind} ${name} handed back (original env, ${options.replicas} replicas, no finalizer)`,
    async () => {
      const w = await readWorkload(kc, kind, namespace, name);
      return {
        env: options.env.map((e) => envOf(w, e.container, e.name)),
        replicas: w.spec?.replicas,
        finalizers: w.metadata?.finalizers ?? [],
        annotations: Object.keys(w.spec?.template.metadata?.annotations ?? {}),
      };
    },
    (w) =>
      w.env.every((v, i) => v === options.env[i]!.value) &&
      w.replicas === options.replicas &&
      !w.finalizers.includes('queuesplit.dev/handback') &&
      !w.annotations.some((a) => a.startsWith('queuesplit.dev/')),
    options.timeoutMs ?? 180_000,
  );
  await waitForReadyPods(kc, namespace, name, options.replicas);
}
