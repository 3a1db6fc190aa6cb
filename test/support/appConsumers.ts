// What a workload's queue-agent reports about the application's consumers while the app is
// redirected (ObservedQueue.appShadowConsumers) and restored (sourceConsumers): the controller's
// evidence that the new pods consume, which ends the rollout proof before the stable window
// (docs/design.md "Where activation time goes"). Every version of the agent's observed document
// is seen through a watch (the figures live only until the controller advances, often for less
// than a poll interval).
import { AppsV1Api, CoreV1Api, Watch, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { OBSERVED_KEY, type ObservedState } from '../../core/agentProtocol';
import { kubernetesObjectNames } from '../../core/names';
import { testInstall } from '../../deploy/install';

/** The most consumers reported per queue (a queue is absent when none was ever reported). */
export interface ConsumersSeen {
  appShadow: Record<string, number>;
  source: Record<string, number>;
}

export interface ConsumerRecorder {
  /** Stops watching; what was reported. */
  stop(): Promise<ConsumersSeen>;
}

/** Watches the observed document of `workload`'s queue-agent until stopped. */
export async function recordAppConsumers(
  kc: KubeConfig,
  namespace: string,
  workload: string,
): Promise<ConsumerRecorder> {
  const core = kc.makeApiClient(CoreV1Api);
  const install = await core.readNamespacedConfigMap({
    name: 'queuesplit-install',
    namespace: testInstall.namespace,
  });
  const d = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: workload, namespace });
  const names = kubernetesObjectNames({
    installId: install.data!.installId!,
    workloadUid: d.metadata!.uid!,
    workloadName: workload,
  });
  const most: ConsumersSeen = { appShadow: {}, source: {} };
  const note = (into: Record<string, number>, queue: string, n: number | undefined) => {
    if (n !== undefined) into[queue] = Math.max(into[queue] ?? 0, n);
  };
  const watching = await new Watch(kc).watch(
    `/api/v1/namespaces/${namespace}/configmaps`,
    { fieldSelector: `metadata.name=${names.agentStatusConfigMap}` },
    (_type: string, cm: V1ConfigMap) => {
      const text = cm.data?.[OBSERVED_KEY];
      if (!text) return;
      for (const [queue, q] of Object.entries((JSON.parse(text) as ObservedState).queues)) {
        note(most.appShadow, queue, q.appShadowConsumers);
        note(most.source, queue, q.sourceConsumers);
      }
    },
    () => undefined,
  );
  return {
    stop() {
      watching.abort();
      return Promise.resolve(most);
    },
  };
}
