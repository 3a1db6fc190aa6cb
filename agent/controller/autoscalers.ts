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
function scaledObjectOf(hpa: V2HorizontalPodAutoscaler): string | undefined {
  const owner = hpa.metadata?.ownerReferences?.find(
    (o) => o.kind === 'ScaledObject' && o.apiVersion.startsWith('keda.sh/'),
  );
  return owner?.name ?? hpa.metadata?.labels?.['scaledobject.keda.sh/name'];
}

/**
 * An HPA with minReplicas 0 (the HPAScaleToZero feature) keeps scaling a target held at zero, so
 * it could start the app beside the queue-agent in the middle of a window; so does KEDA, whose
 * operator scales its targets from zero itself whatever its HPA says. Both are refused by name.
 */
export function autoscalerRefusal(hpas: readonly V2HorizontalPodAutoscaler[]): Refusal | undefined {
  const keda = hpas.map(scaledObjectOf).filter((n): n is string => n !== undefined);
  if (keda.length > 0) {
    return {
      reason: 'KedaManaged',
      message:
        `KEDA ScaledObject ${keda.join(', ')} scales this workload, from zero too, so it could start the app on its source beside the queue-agent while Queue Split holds it at zero for the handover. ` +
        'Splitting a KEDA-scaled workload is not supported yet: pause the ScaledObject (annotation autoscaling.keda.sh/paused: "true") for the length of the split, start the split again, and remove the annotation after the handback.',
    };
  }
  const fromZero = hpas.filter((h) => minReplicas(h) === 0).map((h) => h.metadata?.name ?? '?');
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
