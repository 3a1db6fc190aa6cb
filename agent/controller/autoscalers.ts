// What a HorizontalPodAutoscaler on a split workload means for the handover windows
// (docs/design.md, "Autoscaled workloads"). The windows rely on one Kubernetes guarantee: an HPA
// whose target has spec.replicas 0 and whose minReplicas is not 0 does not scale it (its
// ScalingActive condition turns False, reason ScalingDisabled). So the controller only refuses
// the HPA that can scale from zero, and tells apart an HPA's own scaling from a person's.
import type { V2HorizontalPodAutoscaler } from '@kubernetes/client-node';

export interface Refusal {
  reason: string;
  message: string;
}

/** minReplicas as the HPA controller reads it: absent means 1. */
function minReplicas(hpa: V2HorizontalPodAutoscaler): number {
  return hpa.spec?.minReplicas ?? 1;
}

/** The KEDA ScaledObject that made this HPA (KEDA owns the HPAs it scales through). */
export function scaledObjectOf(hpa: V2HorizontalPodAutoscaler): string | undefined {
  const owner = hpa.metadata?.ownerReferences?.find(
    (o) => o.kind === 'ScaledObject' && o.apiVersion.startsWith('keda.sh/'),
  );
  return owner?.name ?? hpa.metadata?.labels?.['scaledobject.keda.sh/name'];
}

/** Whether KEDA made this HPA; KEDA's are paused with their ScaledObject instead (keda.ts). */
export function kedaOwned(hpa: V2HorizontalPodAutoscaler): boolean {
  return scaledObjectOf(hpa) !== undefined;
}

/**
 * An HPA with minReplicas 0 (the HPAScaleToZero feature) keeps scaling a target held at zero, so
 * it could start the app beside the queue-agent in the middle of a window: refused by name. An
 * HPA KEDA made goes away when the split pauses its ScaledObject (keda.ts), before any window.
 */
export function autoscalerRefusal(hpas: readonly V2HorizontalPodAutoscaler[]): Refusal | undefined {
  const fromZero = hpas
    .filter((h) => !kedaOwned(h) && minReplicas(h) === 0)
    .map((h) => h.metadata?.name ?? '?');
  if (fromZero.length === 0) return undefined;
  return {
    reason: 'AutoscalerScalesFromZero',
    message:
      `HorizontalPodAutoscaler ${fromZero.join(', ')} has minReplicas 0, so it keeps scaling the workload while Queue Split holds it at zero replicas for the handover, ` +
      'which would start the app on its source beside the queue-agent. Set spec.minReplicas to 1 or more on it while the workload is split, then start the split again.',
  };
}

/** Names for messages: "HorizontalPodAutoscaler a, b". */
export function autoscalerNames(hpas: readonly V2HorizontalPodAutoscaler[]): string {
  return `HorizontalPodAutoscaler ${hpas.map((h) => h.metadata?.name ?? '?').join(', ')}`;
}
