// KEDA's documented contract for a ScaledObject, played by the test, because the KEDA operator is
// not run here: its module needs a newer Go than this machine's for current versions, and a build
// of it would take much of the suite's time budget (docs/design.md, "KEDA-scaled workloads").
// What it does is what KEDA's scaledobject_controller does (v2.20, handlePause and the scale
// loop), reduced to the parts a split meets:
//  - unpaused: it keeps an HPA `keda-hpa-<name>` owned by the ScaledObject (the real HPA
//    controller then scales the target on the test's External metric), and activates the target
//    from zero to one replica while its trigger is active, as KEDA's own scale loop does;
//  - paused (`autoscaling.keda.sh/paused: "true"` or `paused-replicas`): Paused condition True,
//    scale loop stopped, HPA deleted, replicas left alone;
//  - unpaused again: Paused condition False, the HPA made again.
// The ScaledObject itself is KEDA's real CRD, from the kedacore/keda module (test/env/keda.ts).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  AutoscalingV2Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { parse } from 'yaml';
import { isConflict, isNotFound, mergePatch } from '../../agent/kube/client';
import { applyObjects } from '../../deploy/apply';
import { kedaScaledObjectCrd } from '../env/keda';
import type { ClusterFixture } from './clusterFixture';
import { pollUntil } from './poll';
import { rabbitApp } from './rabbitSplit';

const API = { group: 'keda.sh', version: 'v1alpha1', plural: 'scaledobjects' } as const;

/** Installs KEDA's ScaledObject CRD once (it stays: other files may meet it, as in a cluster with KEDA). */
export async function installKedaCrd(kc: KubeConfig): Promise<void> {
  if (!fs.existsSync(kedaScaledObjectCrd))
    throw new Error(`${kedaScaledObjectCrd} is missing: run npm run env:up (it fetches KEDA's CRD)`);
  const crd = parse(fs.readFileSync(kedaScaledObjectCrd, 'utf8')) as V1CustomResourceDefinition;
  // As the install applies its own CRD: a plain object would lose its x-kubernetes-* keys.
  await applyObjects(kc, [crd]);
  const api = kc.makeApiClient(ApiextensionsV1Api);
  await pollUntil(
    'the ScaledObject CRD is established',
    () => api.readCustomResourceDefinition({ name: crd.metadata!.name! }),
    (c) => c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True') === true,
    30_000,
  );
}

interface ScaledObjectDoc {
  metadata: { name: string; uid: string; annotations?: Record<string, string> };
  spec: { scaleTargetRef: { name: string }; minReplicaCount?: number; maxReplicaCount?: number };
  status?: { conditions?: { type: string; status: string }[] };
}

export interface KedaContract {
  /** Scale-loop and HPA decisions made (activations from zero, HPAs made and deleted). */
  readonly actions: string[];
  /** While true, a pause is noticed but not carried out (a slow or stopped operator). */
  hold: boolean;
  stop(): Promise<void>;
}

/** Plays KEDA for ScaledObject `name` in `namespace`; `metric` is its trigger (External metric). */
export function playKeda(
  kc: KubeConfig,
  namespace: string,
  name: string,
  metric: { name: string; value: () => number },
): KedaContract {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const autoscaling = kc.makeApiClient(AutoscalingV2Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const hpaName = `keda-hpa-${name}`;
  const contract = { actions: [] as string[], hold: false, stop: async () => undefined };
  let running = true;

  const setPaused = async (so: ScaledObjectDoc, paused: boolean) => {
    const now = so.status?.conditions?.find((c) => c.type === 'Paused')?.status === 'True';
    if (now === paused) return;
    await custom.patchNamespacedCustomObjectStatus(
      {
        ...API,
        namespace,
        name,
        body: {
          status: {
            conditions: [
              {
                type: 'Paused',
                status: paused ? 'True' : 'False',
                reason: paused ? 'ScaledObjectPaused' : 'ScaledObjectUnpaused',
                message: paused ? 'ScaledObject is paused' : 'pause annotation removed for ScaledObject',
              },
            ],
          },
        },
      },
      mergePatch,
    );
  };

  const hpaExists = async () => {
    try {
      await autoscaling.readNamespacedHorizontalPodAutoscaler({ name: hpaName, namespace });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  };

  const step = async () => {
    const so = (await custom.getNamespacedCustomObject({ ...API, namespace, name })) as ScaledObjectDoc;
    const a = so.metadata.annotations ?? {};
    const paused =
      a['autoscaling.keda.sh/paused'] === 'true' || a['autoscaling.keda.sh/paused-replicas'] !== undefined;
    if (paused) {
      if (contract.hold) return;
      await setPaused(so, true);
      if (await hpaExists()) {
        await autoscaling.deleteNamespacedHorizontalPodAutoscaler({ name: hpaName, namespace });
        contract.actions.push('hpa deleted');
      }
      return;
    }
    await setPaused(so, false);
    if (!(await hpaExists())) {
      await autoscaling.createNamespacedHorizontalPodAutoscaler({
        namespace,
        body: {
          metadata: {
            name: hpaName,
            labels: { 'scaledobject.keda.sh/name': name, 'app.kubernetes.io/managed-by': 'keda-operator' },
            ownerReferences: [
              {
                apiVersion: 'keda.sh/v1alpha1',
                kind: 'ScaledObject',
                name,
                uid: so.metadata.uid,
                controller: true,
              },
            ],
          },
          spec: {
            scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: so.spec.scaleTargetRef.name },
            minReplicas: Math.max(so.spec.minReplicaCount ?? 0, 1),
            maxReplicas: so.spec.maxReplicaCount ?? 100,
            metrics: [
              {
                type: 'External',
                external: {
                  metric: { name: metric.name },
                  target: { type: 'AverageValue', averageValue: '1' },
                },
              },
            ],
            behavior: {
              scaleUp: { stabilizationWindowSeconds: 0 },
              scaleDown: { stabilizationWindowSeconds: 0 },
            },
          },
        },
      });
      contract.actions.push('hpa made');
    }
    // KEDA's scale loop activates a target at zero while its trigger is active.
    const target = await apps.readNamespacedDeployment({ name: so.spec.scaleTargetRef.name, namespace });
    if ((target.spec?.replicas ?? 1) === 0 && metric.value() > 0) {
      await apps.replaceNamespacedDeploymentScale({
        name: so.spec.scaleTargetRef.name,
        namespace,
        body: { metadata: { name: so.spec.scaleTargetRef.name, namespace }, spec: { replicas: 1 } },
      });
      contract.actions.push('activated from zero');
    }
  };

  const loop = (async () => {
    while (running) {
      await step().catch((err: unknown) => {
        if (!isNotFound(err) && !isConflict(err)) contract.actions.push(`error: ${String(err)}`);
      });
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  contract.stop = async () => {
    running = false;
    await loop;
  };
  return contract;
}

export interface ScaledObjectSeen {
  metadata: { annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: unknown;
}

/** Nothing of ours left on the ScaledObject: annotations, labels and spec as `before`. */
export function assertScaledObjectAsBefore(after: ScaledObjectSeen, before: ScaledObjectSeen): void {
  assert.deepEqual(
    after.metadata.annotations ?? {},
    before.metadata.annotations ?? {},
    'annotations as before',
  );
  assert.deepEqual(after.metadata.labels ?? {}, before.metadata.labels ?? {}, 'labels as before');
  assert.deepEqual(after.spec, before.spec, 'spec as before');
}

/**
 * A RabbitMQ app `workload` (pods that take 3 s to stop) with a KEDA ScaledObject on it, in the
 * fixture's namespace; KEDA's CRD installed first. Returns the source and a reader of the
 * ScaledObject.
 */
export async function kedaScaledApp(
  fx: Pick<ClusterFixture, 'kc' | 'services' | 'namespace' | 'ch'>,
  workload: string,
): Promise<{ source: string; read: () => Promise<ScaledObjectSeen> }> {
  const { kc, namespace } = fx;
  await installKedaCrd(kc);
  const source = await rabbitApp(fx, workload, {
    shape: (d) => {
      d.spec!.template.spec!.containers[0]!.lifecycle = { preStop: { sleep: { seconds: 3 } } };
    },
  });
  const custom = kc.makeApiClient(CustomObjectsApi);
  await custom.createNamespacedCustomObject({
    ...API,
    namespace,
    body: {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: workload, annotations: { 'team.example/owner': 'payments' } },
      spec: {
        scaleTargetRef: { name: workload },
        minReplicaCount: 0,
        maxReplicaCount: 3,
        triggers: [{ type: 'rabbitmq', metadata: { queueName: source, mode: 'QueueLength', value: '1' } }],
      },
    },
  });
  // CustomObjectsApi answers untyped JSON; a ScaledObject has this shape.
  const read = async () =>
    (await custom.getNamespacedCustomObject({ ...API, namespace, name: workload })) as ScaledObjectSeen;
  return { source, read };
}
