// What a workload's queue-agent reports about its application shadows' consumers while the app is
// redirected (ObservedQueue.appShadowConsumers): the controller's evidence that the redirected
// pods consume, which ends the rollout proof before the stable window (docs/design.md "Where
// activation time goes"). Read from the agent's observed document as a test watches an activation.
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { OBSERVED_KEY, type ObservedState } from '../../core/agentProtocol';
import { kubernetesObjectNames } from '../../core/names';
import { testInstall } from '../../deploy/install';

export interface ConsumerRecorder {
  /** Stops reading; the most consumers reported per queue (absent: never reported). */
  stop(): Promise<Record<string, number>>;
}

/** Reads the observed document of `workload`'s queue-agent every 200 ms until stopped. */
export function recordShadowConsumers(kc: KubeConfig, namespace: string, workload: string): ConsumerRecorder {
  const core = kc.makeApiClient(CoreV1Api);
  const most: Record<string, number> = {};
  let running = true;
  const loop = (async () => {
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
    while (running) {
      const cm = await core
        .readNamespacedConfigMap({ name: names.agentStatusConfigMap, namespace })
        .catch(() => undefined);
      const text = cm?.data?.[OBSERVED_KEY];
      if (text) {
        const observed = JSON.parse(text) as ObservedState;
        for (const [queue, q] of Object.entries(observed.queues)) {
          if (q.appShadowConsumers !== undefined)
            most[queue] = Math.max(most[queue] ?? 0, q.appShadowConsumers);
        }
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return most;
    },
  };
}
