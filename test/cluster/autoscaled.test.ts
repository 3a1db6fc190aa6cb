// A workload scaled by a real HorizontalPodAutoscaler splits and hands back (docs/design.md,
// "Autoscaled workloads"). The HPA controller is the real kube-controller-manager's, reconciling
// every second (test/env/k8s/controlPlane.ts); its metric is an External one this test serves
// through the real aggregation layer (test/support/externalMetrics.ts), so the test decides when
// the HPA wants more pods: inside each handover window it wants three. Kubernetes' guarantee
// (an HPA leaves a target at zero replicas alone) must hold the windows; once the app runs on its
// shadow the HPA scales it there; after the handback the HPA is exactly as before and scales the
// app on its source again. A KEDA-scaled workload is split with its ScaledObject paused through
// KEDA's annotation (KEDA's real CRD; its operator's contract played by test/support/kedaContract.ts).
//
// One file for both: the External metrics API is one cluster-wide APIService.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  type KubeConfig,
  type V1Deployment,
  type V1Pod,
  type V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import { isNotFound } from '../../agent/kube/client';
import { restrictedKubeconfig } from '../env/k8s/kubeconfig';
import { runDir } from '../env/paths';
import { grantDeveloper } from '../../deploy/install';
import { clusterFixture } from '../support/clusterFixture';
import { serveExternalMetrics, type ExternalMetrics } from '../support/externalMetrics';
import { assertScaledObjectAsBefore, kedaScaledApp, playKeda } from '../support/kedaContract';
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
import {
  createSplit,
  deleteSplit,
  getSplit,
  removeSplit,
  waitForSplitGone,
  waitForSplitPhase,
} from '../support/splits';

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
  /** The HPA's ScalingActive condition ("status/reason"), or "gone". */
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

/** Samples `workload` (and the HPA named `hpa`) every 200 ms through a split's life. */
function sample(
  kc: KubeConfig,
  namespace: string,
  workload: string,
  hpa: string,
  onSample: (s: Sample) => void = () => undefined,
) {
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const autoscaling = kc.makeApiClient(AutoscalingV2Api);
  const watch = new PhaseWatch(kc, namespace, workload, async () => undefined);
  watch.start();
  const samples: Sample[] = [];
  const started = Date.now();
  let sampling = true;
  const loop = (async () => {
    while (sampling) {
      const [deployment, pods, condition] = await Promise.all([
        apps.readNamespacedDeployment({ name: workload, namespace }),
        core.listNamespacedPod({ namespace, labelSelector: `app=${workload}` }),
        autoscaling
          .readNamespacedHorizontalPodAutoscaler({ name: hpa, namespace })
          .then(scalingActive, (err: unknown) => (isNotFound(err) ? 'gone' : 'unread')),
      ]);
      const s: Sample = {
        at: Date.now() - started,
        phase: watch.phase,
        replicas: deployment.spec?.replicas ?? 1,
        pods: pods.items.filter((p) => !p.metadata?.deletionTimestamp).map(sourceOf),
        scalingActive: condition,
      };
      samples.push(s);
      onSample(s);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    samples,
    watch,
    timeline: () =>
      samples
        .map(
          (s) =>
            `${(s.at / 1000).toFixed(1)}s ${s.phase || '-'} r=${s.replicas} pods=[${s.pods.join(',')}] ${s.scalingActive}`,
        )
        .join('\n'),
    stop: async () => {
      sampling = false;
      await loop;
      watch.stop();
    },
  };
}

/** No app pod while the pump starts or the handoff commits; none on the source beside the pump. */
function assertWindowsHeld(samples: readonly Sample[], source: string, timeline: () => string): void {
  for (const s of samples.filter((x) => x.phase === 'STARTING_PUMP' || x.phase === 'COMMITTING_HANDOFF'))
    assert.deepEqual(
      [s.replicas, s.pods],
      [0, []],
      `no app pod while the pump starts or the handoff commits\n${timeline()}`,
    );
  for (const s of samples.filter((x) =>
    ['STARTING_PUMP', 'REDIRECTING_APP', 'ACTIVE', 'STOPPING_SOURCE', 'DRAINING_APP'].includes(x.phase),
  ))
    assert.ok(!s.pods.includes(source), `no app pod reads the source beside the pump\n${timeline()}`);
}

const revision = async (kc: KubeConfig, namespace: string, name: string) =>
  Number(
    (await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name, namespace })).metadata?.annotations?.[
      'deployment.kubernetes.io/revision'
    ],
  );

/** A pod takes 3 s to stop (a preStop pause), so each window lasts several HPA reconciles. */
const slowToStop = (d: V1Deployment) => {
  d.spec!.template.spec!.containers[0]!.lifecycle = { preStop: { sleep: { seconds: 3 } } };
};

/** Alice's split of `workload`, Active; returns its name and her session shadow. */
async function aliceSplit(workload: string): Promise<{ name: string; session: string }> {
  const split = await createSplit(dev, fx.namespace, {
    workload,
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'alice' },
    owner: `system:serviceaccount:${fx.namespace}:alice`,
  });
  const active = await waitForSplitPhase(dev, fx.namespace, split.metadata.name, 'Active', 180_000);
  const session = active.status?.queues?.[0]?.shadow?.source;
  assert.ok(session, 'the status names alice session shadow');
  return { name: split.metadata.name, session };
}

/** Alice gets her 10, the app the other 10. */
async function deliverBoth(source: string, session: string): Promise<void> {
  const alice = ids(source, 'alice', 10);
  const others = ids(source, 'bob', 10);
  await publishTo(fx.ch, source, alice, 'alice');
  await publishTo(fx.ch, source, others, 'bob');
  const mine: string[] = [];
  const local = await consumeQueueIds(fx.conn, session, mine);
  await pollUntil(
    'alice received her 10 messages',
    async () => mine.length,
    (n) => n >= 10,
    60_000,
  );
  await waitForAppReceived('the app processed the rest', others, 60_000, source);
  await local.close();
  assert.deepEqual([...mine].sort(), [...alice].sort(), 'alice got exactly hers');
}

test('an HPA-scaled workload: the HPA that wants three pods inside each handover window scales nothing there, scales the app on its shadow while split, and is exactly as before after the handback', async () => {
  const { kc, namespace, ch } = fx;
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const autoscaling = kc.makeApiClient(AutoscalingV2Api);
  const source = await rabbitApp(fx, 'scaled-app', { shape: slowToStop });
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
  const revisionBefore = await revision(kc, namespace, 'scaled-app');

  // From the moment the controller holds the app at zero, the HPA's metric asks for three.
  let wantsMore = false;
  const run = sample(kc, namespace, 'scaled-app', 'scaled-app', (s) => {
    if (!wantsMore && s.phase === 'QUIESCING_APP' && s.replicas === 0) {
      wantsMore = true;
      metrics.set(METRIC, 3);
    }
  });
  const { samples, timeline } = run;

  try {
    const split = await aliceSplit('scaled-app');
    const redirected = await apps.readNamespacedDeployment({ name: 'scaled-app', namespace });
    const shadow = redirected.spec?.template.spec?.containers[0]?.env?.find(
      (e) => e.name === 'SOURCE_QUEUE',
    )?.value;
    assert.ok(
      shadow && shadow !== source && shadow !== split.session,
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
    await deliverBoth(source, split.session);

    await removeSplit(dev, namespace, split.name, 180_000);
    await waitForRabbitHandback(kc, namespace, 'scaled-app', source, { replicas: 3, timeoutMs: 180_000 });
  } finally {
    await run.stop();
  }
  console.log(`phases: ${run.watch.describe()}`);

  // The windows held: at zero while the HPA wanted three, and the HPA said why it did not act.
  for (const [name, phases] of Object.entries(WINDOW)) {
    const inWindow = samples.filter((s) => phases.includes(s.phase) && s.replicas === 0);
    assert.ok(inWindow.length > 0, `the ${name} window was sampled\n${timeline()}`);
    assert.ok(
      inWindow.some((s) => s.scalingActive === 'False/ScalingDisabled'),
      `inside the ${name} window the HPA reconciled and left the workload at zero (ScalingDisabled)\n${timeline()}`,
    );
  }
  assertWindowsHeld(samples, source, timeline);

  const hpaAfter = await autoscaling.readNamespacedHorizontalPodAutoscaler({ name: 'scaled-app', namespace });
  assert.deepEqual(hpaAfter.spec, hpaBefore.spec, 'the HPA spec is exactly as before');
  assert.deepEqual(hpaAfter.metadata?.annotations ?? {}, hpaBefore.metadata?.annotations ?? {});
  const revisionAfter = await revision(kc, namespace, 'scaled-app');
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

const KEDA_METRIC = 'keda_backlog';
test('a KEDA-scaled workload: its ScaledObject is paused through KEDA’s annotation for the split (its HPA gone, its scale-from-zero out of both windows) and resumed exactly as it was at the handback', async () => {
  const { kc, namespace } = fx;
  const apps = kc.makeApiClient(AppsV1Api);
  const autoscaling = kc.makeApiClient(AutoscalingV2Api);
  let load = 1;
  metrics.set(KEDA_METRIC, load);
  const { source, read } = await kedaScaledApp(fx, 'keda-app');
  const keda = playKeda(kc, namespace, 'keda-app', { name: KEDA_METRIC, value: () => load });
  try {
    await pollUntil(
      'KEDA’s HPA scales the app on its metric',
      () => autoscaling.readNamespacedHorizontalPodAutoscaler({ name: 'keda-hpa-keda-app', namespace }),
      (h) => scalingActive(h) === 'True/ValidMetricFound',
      60_000,
    );
    const before = await read();
    const revisionBefore = await revision(kc, namespace, 'keda-app');

    // Inside the windows KEDA's trigger is active and asks for three: were it not paused, its
    // scale loop would take the app from zero to one, and its HPA on to three.
    const run = sample(kc, namespace, 'keda-app', 'keda-hpa-keda-app', (s) => {
      if (load === 1 && s.phase === 'QUIESCING_APP') {
        load = 3;
        metrics.set(KEDA_METRIC, load);
      }
    });
    try {
      const split = await aliceSplit('keda-app');
      const paused = await read();
      assert.equal(
        paused.metadata.annotations?.['autoscaling.keda.sh/paused'],
        'true',
        'paused by KEDA’s annotation',
      );
      assert.equal(paused.metadata.labels?.['queuesplit.dev/paused'], 'true');
      assert.ok(keda.actions.includes('hpa deleted'), `KEDA deleted its HPA: ${keda.actions.join(', ')}`);
      // While split KEDA is paused: the app keeps the replica count it had, on its shadow.
      assert.equal((await apps.readNamespacedDeployment({ name: 'keda-app', namespace })).spec?.replicas, 1);
      await deliverBoth(source, split.session);
      await removeSplit(dev, namespace, split.name, 180_000);
      await waitForRabbitHandback(kc, namespace, 'keda-app', source, { timeoutMs: 180_000 });
    } finally {
      await run.stop();
    }
    console.log(`phases: ${run.watch.describe()}; KEDA: ${keda.actions.join(', ')}`);
    assertWindowsHeld(run.samples, source, run.timeline);
    for (const [name, phases] of Object.entries(WINDOW)) {
      const inWindow = run.samples.filter((s) => phases.includes(s.phase));
      assert.ok(inWindow.length > 0, `the ${name} window was sampled\n${run.timeline()}`);
      assert.ok(
        inWindow.every((s) => s.scalingActive === 'gone'),
        `no KEDA HPA inside the ${name} window\n${run.timeline()}`,
      );
    }
    assert.ok(
      !keda.actions.includes('activated from zero'),
      `KEDA never scaled from zero: ${keda.actions.join(', ')}`,
    );

    // Resumed exactly: KEDA's annotations and labels as before, and KEDA scales the app again.
    assertScaledObjectAsBefore(await read(), before);
    assert.equal((await revision(kc, namespace, 'keda-app')) - revisionBefore, 2, 'two rollouts');
    await pollUntil(
      'KEDA, resumed, scales the app to its trigger’s three',
      () => apps.readNamespacedDeployment({ name: 'keda-app', namespace }),
      (d) => d.spec?.replicas === 3,
      60_000,
    );
  } finally {
    await keda.stop();
  }
});

test('a split of a KEDA-scaled workload waits for KEDA to confirm its pause; deleted meanwhile, it leaves the ScaledObject and the workload as they were', async () => {
  const { kc, namespace } = fx;
  const apps = kc.makeApiClient(AppsV1Api);
  metrics.set(KEDA_METRIC, 1);
  const { read } = await kedaScaledApp(fx, 'keda-slow');
  const keda = playKeda(kc, namespace, 'keda-slow', { name: KEDA_METRIC, value: () => 1 });
  try {
    await pollUntil(
      'KEDA made its HPA',
      async () => keda.actions,
      (a) => a.includes('hpa made'),
      30_000,
    );
    const before = await read();
    const workloadBefore = await apps.readNamespacedDeployment({ name: 'keda-slow', namespace });
    keda.hold = true; // a slow operator: it sees the annotation but has not paused yet
    const split = await createSplit(dev, namespace, {
      workload: 'keda-slow',
      queues: ['orders'],
      filter: { 'x-queue-split-user': 'alice' },
      owner: `system:serviceaccount:${namespace}:alice`,
    });
    await pollUntil(
      'the split asked KEDA to pause',
      read,
      (so) => so.metadata.annotations?.['autoscaling.keda.sh/paused'] === 'true',
      30_000,
    );
    await new Promise((r) => setTimeout(r, 3_000));
    const waiting = await getSplit(dev, namespace, split.metadata.name);
    assert.ok(
      !['Active', 'Activating'].includes(waiting?.status?.phase ?? ''),
      `the split waits for KEDA: ${waiting?.status?.phase}`,
    );
    const workloadWaiting = await apps.readNamespacedDeployment({ name: 'keda-slow', namespace });
    assert.equal(
      workloadWaiting.metadata?.generation,
      workloadBefore.metadata?.generation,
      'the workload untouched',
    );
    assert.equal(workloadWaiting.spec?.replicas, 1, 'never quiesced while KEDA could still scale it');

    await deleteSplit(dev, namespace, split.metadata.name);
    await waitForSplitGone(dev, namespace, split.metadata.name, 60_000);
    assertScaledObjectAsBefore(await read(), before);
    const workloadAfter = await apps.readNamespacedDeployment({ name: 'keda-slow', namespace });
    assert.equal(
      workloadAfter.metadata?.generation,
      workloadBefore.metadata?.generation,
      'the workload untouched',
    );
    assert.ok(
      !(workloadAfter.metadata?.finalizers ?? []).includes('queuesplit.dev/handback'),
      'no finalizer',
    );
  } finally {
    await keda.stop();
  }
});
