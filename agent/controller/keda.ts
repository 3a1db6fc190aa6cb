// KEDA ScaledObjects of a split workload (docs/design.md, "KEDA-scaled workloads"). KEDA scales
// its targets to and from zero itself, and on the source's backlog, which the queue-agent drains
// while the app reads its shadow: so a split pauses the ScaledObject through KEDA's own
// annotation for as long as the workload is split, and removes exactly what it added when the
// workload is handed back.
//
// KEDA's contract (kedacore/keda v2.20 controllers/keda/scaledobject_controller.go, handlePause;
// "Pausing autoscaling" in KEDA's docs): on `autoscaling.keda.sh/paused: "true"` KEDA sets its
// Paused condition, stops its scale loop, deletes its HPA and leaves the target's replicas as they
// are; removing the annotation resumes it and recreates the HPA. (`paused-replicas` is not used:
// KEDA re-applies that count on every reconcile, which could undo a handover window's zero.)
// Invariants:
//  1. A split starts only once every ScaledObject of the workload reports Paused and its HPA is
//     gone: the Paused condition is set before the loop stops, the HPA deleted after.
//  2. A ScaledObject someone else paused is left as it is and never resumed by us; the split
//     still waits for its pause to be complete.
//  3. What we add is marked (`queuesplit.dev/paused-for` = the workload's uid, and a label to
//     find it), and resuming removes exactly our annotations and label, nothing else.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { isNotFound, mergePatch, statusCode } from '../kube/client';

export const PAUSED_REPLICAS = 'autoscaling.keda.sh/paused-replicas';
export const PAUSED = 'autoscaling.keda.sh/paused';
export const PAUSED_FOR = 'queuesplit.dev/paused-for';
export const PAUSED_LABEL = 'queuesplit.dev/paused';

const API = { group: 'keda.sh', version: 'v1alpha1', plural: 'scaledobjects' } as const;

/** The parts of a ScaledObject read here (keda.sh/v1alpha1). */
export interface ScaledObject {
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: { scaleTargetRef: { name: string; kind?: string } };
  status?: { conditions?: { type: string; status: string }[] };
}

export interface PauseState {
  /** Whether it carries a pause annotation (ours or someone else's). */
  asked: boolean;
  /** Whether the pause is ours to remove (invariant 3). */
  ours: boolean;
  /** KEDA reports Paused and its HPA is gone (invariant 1). */
  done: boolean;
}

/** `hpaLeft`: an HPA KEDA made for this ScaledObject still exists. */
export function pauseState(so: ScaledObject, workloadUid: string, hpaLeft: boolean): PauseState {
  const annotations = so.metadata.annotations ?? {};
  const asked = annotations[PAUSED] === 'true' || annotations[PAUSED_REPLICAS] !== undefined;
  const reported = so.status?.conditions?.some((c) => c.type === 'Paused' && c.status === 'True') ?? false;
  return { asked, ours: annotations[PAUSED_FOR] === workloadUid, done: asked && reported && !hpaLeft };
}

/** The controller's role lacks the ScaledObject rights: a refusal to report, not a failure to retry. */
export class KedaForbidden extends Error {}

export class KedaPauses {
  private readonly api: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.api = kc.makeApiClient(CustomObjectsApi);
  }

  /** The workload's ScaledObjects; none where KEDA is not installed. */
  async targeting(kind: string, namespace: string, name: string): Promise<ScaledObject[]> {
    let list: { items: ScaledObject[] };
    try {
      // CustomObjectsApi answers untyped JSON; a ScaledObject list has this shape.
      list = (await this.api.listNamespacedCustomObject({ ...API, namespace })) as { items: ScaledObject[] };
    } catch (err) {
      if (isNotFound(err)) return []; // no KEDA CRD: nothing scales it through KEDA
      if (statusCode(err) === 403)
        throw new KedaForbidden(
          'the controller may not list KEDA ScaledObjects (scaledobjects.keda.sh): install it with the current manifests or Helm chart',
        );
      throw err;
    }
    return list.items.filter(
      (so) => so.spec.scaleTargetRef.name === name && (so.spec.scaleTargetRef.kind ?? 'Deployment') === kind,
    );
  }

  /** Asks KEDA to stop scaling `so` for this workload's split (idempotent). */
  async pause(namespace: string, so: ScaledObject, workloadUid: string): Promise<void> {
    await this.patch(namespace, so.metadata.name, {
      metadata: {
        labels: { [PAUSED_LABEL]: 'true' },
        annotations: { [PAUSED]: 'true', [PAUSED_FOR]: workloadUid },
      },
    });
  }

  /** Resumes every ScaledObject of the namespace this workload's split paused (invariant 3). */
  async resume(namespace: string, workloadUid: string): Promise<string[]> {
    let list: { items: ScaledObject[] };
    try {
      list = (await this.api.listNamespacedCustomObject({
        ...API,
        namespace,
        labelSelector: `${PAUSED_LABEL}=true`,
      })) as { items: ScaledObject[] };
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
    const ours = list.items.filter((so) => so.metadata.annotations?.[PAUSED_FOR] === workloadUid);
    for (const so of ours) {
      // null removes a key in a merge patch.
      await this.patch(namespace, so.metadata.name, {
        metadata: {
          labels: { [PAUSED_LABEL]: null },
          annotations: { [PAUSED]: null, [PAUSED_FOR]: null },
        },
      });
    }
    return ours.map((so) => so.metadata.name);
  }

  private async patch(namespace: string, name: string, body: object): Promise<void> {
    try {
      await this.api.patchNamespacedCustomObject({ ...API, namespace, name, body }, mergePatch);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
