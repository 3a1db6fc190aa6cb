// A workload a GitOps tool keeps in sync (docs/design.md, "GitOps-managed workloads"): every few
// seconds the manifest from "Git" is server-side applied with force, under the tool's own field
// manager, as Argo CD's self-heal and Flux's kustomize-controller do. Without the ignore rules the
// README asks for, the split fails closed: the sync puts back the replicas or the env the split
// changed, and the split stops with the cause named and nothing lost. With them (the sync's
// manifest leaves out the split queue's env value and the replicas, as Argo CD's
// RespectIgnoreDifferences does), the split lives through many syncs, the app rolls only twice,
// and after the handback the workload is what Git says.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppsV1Api, PatchStrategy, setHeaderOptions, type V1Deployment } from '@kubernetes/client-node';
import { clusterFixture } from '../support/clusterFixture';
import { pollUntil } from '../support/poll';
import {
  consumeQueueIds,
  ids,
  publishTo,
  rabbitApp,
  waitForAppReceived,
  waitForRabbitHandback,
} from '../support/rabbitSplit';
import { activeSplit, getSplit, removeSplit, splitFor, waitForSplitPhase } from '../support/splits';

const fx = clusterFixture('qs-gitops', { rabbitmq: true });
const serverSideApply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

/** A GitOps tool's self-heal: applies `manifest` every `everyMs` until stopped. */
function syncLoop(name: string, manifest: () => V1Deployment, everyMs: number) {
  const apps = fx.kc.makeApiClient(AppsV1Api);
  let running = true;
  let syncs = 0;
  const errors: string[] = [];
  const loop = (async () => {
    while (running) {
      try {
        await apps.patchNamespacedDeployment(
          { name, namespace: fx.namespace, body: manifest(), fieldManager: 'argocd-controller', force: true },
          serverSideApply,
        );
        syncs += 1;
      } catch (err) {
        errors.push(String(err));
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    syncs: () => syncs,
    errors,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** The app, created from the manifest "Git" holds; returns its source and that manifest. */
async function gitApp(name: string): Promise<{ source: string; git: V1Deployment }> {
  let git: V1Deployment | undefined;
  const source = await rabbitApp(fx, name, { shape: (d) => (git = structuredClone(d)) });
  return { source, git: { ...git!, metadata: { ...git!.metadata, namespace: fx.namespace } } };
}

const revision = async (name: string) =>
  Number(
    (await fx.kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name, namespace: fx.namespace }))
      .metadata?.annotations?.['deployment.kubernetes.io/revision'],
  );

test('a self-healing sync without ignore rules: the activation rolls back naming what the sync changed, waits (saying why) while the sync scales the app up, finishes once the sync pauses after its last scale-up, and loses nothing', async () => {
  const { kc, namespace, ch } = fx;
  const { source, git } = await gitApp('synced');
  // Every 500 ms: shorter than the activation's windows (about 7 s from the quiesce to Active),
  // so a sync always lands in one of them, and shorter than the app's pods take to stop, so the
  // sync scales the app up again after the rollback's own scale-down (as in CI on 2026-12-06,
  // where the split then waited at Pending for ever once the sync stopped).
  const sync = syncLoop('synced', () => git, 500);
  try {
    const before = ids(source, 'before', 5);
    await publishTo(ch, source, before, 'lee');
    const split = await splitFor(kc, namespace, { workload: 'synced', user: 'lee' });
    // The sync puts back what the split changes: the activation rolls back, and while the sync
    // keeps scaling the app up the rollback waits, saying why and what to do.
    const message = (s: Awaited<ReturnType<typeof getSplit>>) => s?.status?.conditions?.[0]?.message ?? '';
    const waiting = await pollUntil(
      'the split says the sync scales the app back while the rollback needs it at zero',
      () => getSplit(kc, namespace, split.metadata.name),
      (s) => /scaled back to 1 replica\(s\) by someone else .*pause the sync/.test(message(s)),
      120_000,
    );
    console.log(`without ignore rules, after ${sync.syncs()} syncs: ${message(waiting)}`);
    await sync.stop();
    // The sync's last scale-up stays: the rollback puts the zero back by itself.
    const failed = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Failed', 120_000);
    assert.match(
      message(failed),
      /changed back by someone else during the redirect|scaled to 1 replicas by someone else/,
      `the cause is named: ${message(failed)}`,
    );
    assert.match(message(failed), /Nothing was lost/);
    await removeSplit(kc, namespace, split.metadata.name, 180_000);
    await waitForRabbitHandback(kc, namespace, 'synced', source, { timeoutMs: 180_000 });
    const after = ids(source, 'after', 5);
    await publishTo(ch, source, after, 'lee');
    await waitForAppReceived(
      'every message reached the app on its source',
      [...before, ...after],
      60_000,
      source,
    );
  } finally {
    await sync.stop();
  }
});

test('a self-healing sync with the README’s ignore rules: the split lives through many syncs, the app rolls twice, and afterwards the workload is what Git says', async () => {
  const { kc, namespace, conn, ch } = fx;
  const { source, git } = await gitApp('ignored');
  // What Argo CD applies under RespectIgnoreDifferences with the README's rules: the manifest
  // without the split queue's env value and without spec.replicas.
  const ignoring = structuredClone(git);
  delete ignoring.spec!.replicas;
  for (const e of ignoring.spec!.template.spec!.containers[0]!.env ?? [])
    if (e.name === 'SOURCE_QUEUE') delete e.value;
  const sync = syncLoop('ignored', () => ignoring, 5_000);
  try {
    await pollUntil(
      'the sync applied once',
      async () => sync.syncs(),
      (n) => n >= 1,
      30_000,
    );
    const revisionBefore = await revision('ignored');
    const split = await activeSplit(kc, namespace, { workload: 'ignored', user: 'lee' }, 180_000);
    const session = split.status!.queues![0]!.shadow!.source!;
    const activeAt = sync.syncs();
    const mine: string[] = [];
    const local = await consumeQueueIds(conn, session, mine);
    const theirs = ids(source, 'lee', 5);
    const others = ids(source, 'plain', 5);
    await publishTo(ch, source, theirs, 'lee');
    await publishTo(ch, source, others);
    await pollUntil(
      'lee received hers',
      async () => mine.length,
      (n) => n >= 5,
      60_000,
    );
    await waitForAppReceived('the app processed the rest', others, 60_000, source);
    await pollUntil(
      'three syncs while Active',
      async () => sync.syncs(),
      (n) => n >= activeAt + 3,
      60_000,
    );
    const still = await getSplit(kc, namespace, split.metadata.name);
    assert.equal(
      still?.status?.phase,
      'Active',
      `the syncs left the split alone: ${still?.status?.conditions?.[0]?.message}`,
    );
    await local.close();
    await removeSplit(kc, namespace, split.metadata.name, 180_000);
    await waitForRabbitHandback(kc, namespace, 'ignored', source, { timeoutMs: 180_000 });
    await pollUntil(
      'a sync after the handback',
      async () => sync.syncs(),
      (n) => n >= activeAt + 5,
      60_000,
    );
    assert.deepEqual(sync.errors, [], 'every sync applied cleanly');
    assert.equal((await revision('ignored')) - revisionBefore, 2, 'two rollouts: to the shadow and back');
    const workload = await kc
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: 'ignored', namespace });
    const plain = (x: unknown) => JSON.parse(JSON.stringify(x)) as unknown;
    assert.deepEqual(
      plain(workload.spec?.template.spec?.containers[0]?.env),
      plain(git.spec?.template.spec?.containers[0]?.env),
      'the env is what Git says',
    );
    assert.equal(workload.spec?.replicas, git.spec?.replicas, 'the replicas are what Git says');
  } finally {
    await sync.stop();
  }
});
