// A workload scaled by a real HorizontalPodAutoscaler splits and hands back (docs/design.md,
// "Autoscaled workloads"). The HPA controller is the real kube-controller-manager's, reconciling
// every second (test/env/k8s/controlPlane.ts); its metric is an External one this test serves
// through the real aggregation layer (test/support/externalMetrics.ts), so the test decides when
// the HPA wants more pods: inside each handover window it wants three. Kubernetes' guarantee
// (an HPA leaves a target at zero replicas alone) must hold the windows; once the app runs on its
// shadow the HPA scales it there; after the handback the HPA is exactly as before and scales the
// app on its source again.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  type KubeConfig,
  type V1Pod,
  type V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import { restrictedKubeconfig } from '../env/k8s/kubeconfig';
import { runDir } from '../env/paths';
import { grantDeveloper } from '../../deploy/install';
import { clusterFixture } from '../support/clusterFixture';
import { serveExternalMetrics, type ExternalMetrics } from '../support/externalMetrics';
import { records, waitForReadyPods } from '../support/kube';
import { PhaseWatch } from '../support/phaseWatch';
import { pollUntil } from '../support/poll';
import {
  consumeQueueIds,
  ids,
  publishTo,
  rabbitApp,
  waitForAppReceived,
  waitForRabbitHandback,
} from '../support/rabbitSplit';
import { createSplit, removeSplit, waitForSplitPhase } from '../support/splits';

const fx = clusterFixture('qs-hpa', { rabbitmq: true });
let dev: KubeConfig;
let metrics: ExternalMetrics;
const METRIC = 'orders_backlog';

fx.setup(async () => {
  await grantDeveloper(fx.kc, fx.namespace, 'alice');
  dev = await restrictedKubeconfig(
    fx.kc,
    fx.namespace,
    'alice',
    path.join(runDir, 'k8s', 'pki', 'ca.crt'),
    path.join(runDir, `kubeconfig-${fx.namespace}-alice`),
  );
  metrics = await serveExternalMetrics(fx.kc, fx.namespace);
  fx.defer(() => metrics.close());
});

/** One look at the workload, its pods and its HPA, with the phase the controller persisted. */
interface Sample {
  at: number;
  phase: string;
  replicas: number;
  /** Pods not being deleted, by the queue their SOURCE_QUEUE names. */
  pods: string[];
  scalingActive: string;
}

function scalingActive(hpa: V2HorizontalPodAutoscaler): string {
  const c = hpa.status?.conditions?.find((x) => x.type === 'ScalingActive');
  return c ? `${c.status}/${c.reason}` : 'none';
}

const sourceOf = (pod: V1Pod) =>
  pod.spec?.containers[0]?.env?.find((e) => e.name === 'SOURCE_QUEUE')?.value ?? '?';

const WINDOW = {
  activation: ['QUIESCING_APP', 'STARTING_PUMP'],
  handback: ['QUIESCING_FOR_HANDBACK', 'COMMITTING_HANDOFF'],
};

test('an HPA-scaled workload: the HPA that wants three pods inside each handover window scales nothing there, scales the app on its shadow while split, and is exactly as before after the handback', async () => {
  const { kc, namespace, conn, ch } = fx;
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const autoscaling = kc.makeApiClient(AutoscalingV2Api);
  // A pod takes 3 s to stop (a preStop pause), so each window lasts several HPA reconciles.
  const source = await rabbitApp(fx, 'scaled-app', {
    shape: (d) => {
      d.spec!.template.spec!.containers[0]!.lifecycle = { preStop: { sleep: { seconds: 3 } } };
    },
  });
  metrics.set(METRIC, 1);
  await autoscaling.createNamespacedHorizontalPodAutoscaler({
    namespace,
    body: {
      metadata: { name: 'scaled-app' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'scaled-app' },
        minReplicas: 1,
        maxReplicas: 3,
        metrics: [
          {
            type: 'External',
            external: { metric: { name: METRIC }, target: { type: 'AverageValue', averageValue: '1' } },
          },
        ],
        // The HPA acts on its metric at once, in both directions.
        behavior: {
          scaleUp: { stabilizationWindowSeconds: 0 },
          scaleDown: { stabilizationWindowSeconds: 0 },
        },
      },
    },
  });
  await pollUntil(
    'the HPA reads its metric through the aggregation layer (ScalingActive True)',
    () => autoscaling.readNamespacedHorizontalPodAutoscaler({ name: 'scaled-app', namespace }),
    (h) => scalingActive(h) === 'True/ValidMetricFound',
    60_000,
  );
  const hpaBefore = await autoscaling.readNamespacedHorizontalPodAutoscaler({
    name: 'scaled-app',
    namespace,
  });
  const revisionBefore = Number(
    (await apps.readNamespacedDeployment({ name: 'scaled-app', namespace })).metadata?.annotations?.[
      'deployment.kubernetes.io/revision'
    ],
  );

  const watch = new PhaseWatch(kc, namespace, 'scaled-app', async () => undefined);
  watch.start();
  const samples: Sample[] = [];
  const started = Date.now();
  let sampling = true;
  let wantsMore = false;
  const sampler = (async () => {
    while (sampling) {
      const [deployment, pods, hpa] = await Promise.all([
        apps.readNamespacedDeployment({ name: 'scaled-app', namespace }),
        core.listNamespacedPod({ namespace, labelSelector: 'app=scaled-app' }),
        autoscaling.readNamespacedHorizontalPodAutoscaler({ name: 'scaled-app', namespace }),
      ]);
      const sample: Sample = {
        at: Date.now() - started,
        phase: watch.phase,
        replicas: deployment.spec?.replicas ?? 1,
        pods: pods.items.filter((p) => !p.metadata?.deletionTimestamp).map(sourceOf),
        scalingActive: scalingActive(hpa),
      };
      samples.push(sample);
      // From the moment the controller holds the app at zero, the HPA's metric asks for three.
      if (!wantsMore && sample.phase === 'QUIESCING_APP' && sample.replicas === 0) {
        wantsMore = true;
        metrics.set(METRIC, 3);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const timeline = () =>
    samples
      .map(
        (s) =>
          `${(s.at / 1000).toFixed(1)}s ${s.phase || '-'} r=${s.replicas} pods=[${s.pods.join(',')}] ${s.scalingActive}`,
      )
      .join('\n');

  try {
    const split = await createSplit(dev, namespace, {
      workload: 'scaled-app',
      queues: ['orders'],
      filter: { 'x-queue-split-user': 'alice' },
      owner: `system:serviceaccount:${namespace}:alice`,
    });
    const active = await waitForSplitPhase(dev, namespace, split.metadata.name, 'Active', 180_000);
    const session = active.status?.queues?.[0]?.shadow?.source;
    assert.ok(session, 'the status names alice session shadow');
    const redirected = await apps.readNamespacedDeployment({ name: 'scaled-app', namespace });
    const shadow = redirected.spec?.template.spec?.containers[0]?.env?.find(
      (e) => e.name === 'SOURCE_QUEUE',
    )?.value;
    assert.ok(
      shadow && shadow !== source && shadow !== session,
      'the app is pointed at its application shadow',
    );

    // While split, the HPA scales the app where it now reads: its shadow.
    await waitForReadyPods(kc, namespace, 'scaled-app', 3);
    const scaledPods = (await core.listNamespacedPod({ namespace, labelSelector: 'app=scaled-app' })).items;
    assert.deepEqual(
      [...new Set(scaledPods.filter((p) => !p.metadata?.deletionTimestamp).map(sourceOf))],
      [shadow],
      'every pod the HPA added reads the application shadow',
    );

    const alice = ids(source, 'alice', 10);
    const others = ids(source, 'bob', 10);
    await publishTo(ch, source, alice, 'alice');
    await publishTo(ch, source, others, 'bob');
    const mine: string[] = [];
    const local = await consumeQueueIds(conn, session, mine);
    await pollUntil(
      'alice received her 10 messages',
      async () => mine.length,
      (n) => n >= 10,
      60_000,
    );
    await waitForAppReceived('the app (three pods) processed the rest', others, 60_000, source);
    await local.close();

    await removeSplit(dev, namespace, split.metadata.name, 180_000);
    await waitForRabbitHandback(kc, namespace, 'scaled-app', source, { replicas: 3, timeoutMs: 180_000 });
  } finally {
    sampling = false;
    await sampler;
    watch.stop();
  }
  console.log(`phases: ${watch.describe()}`);

  // The windows held: at zero while the HPA wanted three, and the HPA said why it did not act.
  for (const [name, phases] of Object.entries(WINDOW)) {
    const inWindow = samples.filter((s) => phases.includes(s.phase) && s.replicas === 0);
    assert.ok(inWindow.length > 0, `the ${name} window was sampled\n${timeline()}`);
    assert.ok(
      inWindow.some((s) => s.scalingActive === 'False/ScalingDisabled'),
      `inside the ${name} window the HPA reconciled and left the workload at zero (ScalingDisabled)\n${timeline()}`,
    );
  }
  for (const s of samples.filter((x) => x.phase === 'STARTING_PUMP' || x.phase === 'COMMITTING_HANDOFF'))
    assert.deepEqual(
      [s.replicas, s.pods],
      [0, []],
      `no app pod while the pump starts or the handoff commits\n${timeline()}`,
    );
  // Never two live destinations: while the pump reads the source, no pod does.
  for (const s of samples.filter((x) =>
    ['STARTING_PUMP', 'REDIRECTING_APP', 'ACTIVE', 'STOPPING_SOURCE', 'DRAINING_APP'].includes(x.phase),
  ))
    assert.ok(!s.pods.includes(source), `no app pod reads the source beside the pump\n${timeline()}`);

  const hpaAfter = await autoscaling.readNamespacedHorizontalPodAutoscaler({ name: 'scaled-app', namespace });
  assert.deepEqual(hpaAfter.spec, hpaBefore.spec, 'the HPA spec is exactly as before');
  assert.deepEqual(hpaAfter.metadata?.annotations ?? {}, hpaBefore.metadata?.annotations ?? {});
  const revisionAfter = Number(
    (await apps.readNamespacedDeployment({ name: 'scaled-app', namespace })).metadata?.annotations?.[
      'deployment.kubernetes.io/revision'
    ],
  );
  console.log(`rollouts of the app through the split: ${revisionAfter - revisionBefore}`);
  assert.equal(revisionAfter - revisionBefore, 2, 'two rollouts: to the shadow and back');

  // The HPA is in charge again on the source: asked for one pod, it scales down to one.
  metrics.set(METRIC, 1);
  await pollUntil(
    'the HPA scales the handed-back app to 1',
    () => apps.readNamespacedDeployment({ name: 'scaled-app', namespace }),
    (d) => d.spec?.replicas === 1,
    60_000,
  );
  const after = ids(source, 'after', 5);
  await publishTo(ch, source, after, 'alice');
  await waitForAppReceived(
    'after the handback the app reads its source again',
    after,
    60_000,
    source,
    source,
  );
  const delivered = new Set(
    records((r) => r.event === 'message').map((r) => (r.event === 'message' ? r.id : '')),
  );
  for (const id of [...ids(source, 'bob', 10), ...after])
    assert.ok(delivered.has(id), `${id} reached the app`);
});
