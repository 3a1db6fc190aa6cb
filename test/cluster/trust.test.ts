// Trust boundaries of the controller and queue-agent (README "Trust boundaries"), against the real
// API server and a real RabbitMQ split: a split the workload does not accept (an empty filter
// without the owner's opt-in, a filter the full validator refuses) is Rejected without touching the
// workload; the CRD refuses a "__proto__" filter key; a corrupt state ConfigMap, a forged desired
// document and a malformed observed document each make the split Degraded with the cause — nothing
// is overwritten, nothing forged is acted on. A desired document the seal does not list (a field
// rewritten with every name intact) is refused by the queue-agent too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as amqp from 'amqplib';
import { AppsV1Api, CoreV1Api, Watch, type V1Deployment } from '@kubernetes/client-node';
import { mergePatch } from '../../agent/kube/client';
import { DESIRED_KEY, OBSERVED_KEY, STATE_KEY } from '../../core/agentProtocol';
import { WHOLE_QUEUE_ANNOTATION } from '../../core/crd/admission';
import { kubernetesObjectNames, type KubernetesObjectNames } from '../../core/names';
import { initialState, serializeState } from '../../core/state/stateDocument';
import { testInstall } from '../../deploy/install';
import { clusterFixture } from '../support/clusterFixture';
import { pollUntil } from '../support/poll';
import { rabbitApp } from '../support/rabbitSplit';
import { createSplit, removeSplit, splitFor, waitForSplitPhase } from '../support/splits';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { uniqueName } from '../support/services';
import { messageBody, messageHeaders } from '../support/secrets';
import { newSessionSecret, sessionPublicKey } from '../../core/sessionSecret';

const WORKLOAD = 'shop';
const fx = clusterFixture('qs-trust', { rabbitmq: true });
const core = () => fx.kc.makeApiClient(CoreV1Api);
let names: KubernetesObjectNames;

fx.setup(async () => {
  const { kc, namespace } = fx;
  await rabbitApp(fx, WORKLOAD);
  const install = await core().readNamespacedConfigMap({
    name: 'queuesplit-install',
    namespace: testInstall.namespace,
  });
  const workload = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: WORKLOAD, namespace });
  names = kubernetesObjectNames({
    installId: install.data!.installId!,
    workloadUid: workload.metadata!.uid!,
    workloadName: WORKLOAD,
  });
});

const readWorkload = () =>
  fx.kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: WORKLOAD, namespace: fx.namespace });

function assertUntouched(before: V1Deployment, after: V1Deployment): void {
  assert.equal(after.metadata?.generation, before.metadata?.generation, 'the workload spec was not changed');
  assert.ok(!(after.metadata?.finalizers ?? []).includes('queuesplit.dev/handback'), 'no handback finalizer');
}

async function configMap(name: string) {
  return core()
    .readNamespacedConfigMap({ name, namespace: fx.namespace })
    .catch(() => undefined);
}

async function replaceKey(name: string, key: string, edit: (text: string | undefined) => string) {
  const cm = await core().readNamespacedConfigMap({ name, namespace: fx.namespace });
  cm.data = { ...cm.data, [key]: edit(cm.data?.[key]) };
  await core().replaceNamespacedConfigMap({ name, namespace: fx.namespace, body: cm });
}

/** Every version of one QueueSplit as the API server sends it. */
async function watchSplit(name: string) {
  const seen: QueueSplit[] = [];
  const controller = await new Watch(fx.kc).watch(
    `/apis/queuesplit.dev/v1alpha1/namespaces/${fx.namespace}/queuesplits`,
    { fieldSelector: `metadata.name=${name}` },
    (_type: string, obj: QueueSplit) => void seen.push(obj),
    () => undefined,
  );
  return {
    /** How many versions were seen so far: `next(…, from)` looks only at later ones. */
    mark: () => seen.length,
    /** The first version `accept` likes (the timeout error shows the last status seen). */
    next: async (accept: (s: QueueSplit) => boolean, timeoutMs: number, from = 0): Promise<QueueSplit> => {
      const found = await pollUntil(
        `QueueSplit ${name}: a matching status`,
        () => Promise.resolve({ match: seen.slice(from).find(accept), last: seen.at(-1)?.status }),
        (r) => r.match !== undefined,
        timeoutMs,
      );
      return found.match!;
    },
    stop: () => controller.abort(),
  };
}

/** Another team's queue, holding one message: where a forged document points the split. */
async function victimQueue(ch: amqp.ConfirmChannel): Promise<string> {
  const victim = uniqueName('trust-victim');
  await ch.assertQueue(victim, { durable: true });
  ch.sendToQueue(victim, Buffer.from(messageBody('keep me')), {
    persistent: true,
    headers: messageHeaders(),
  });
  await ch.waitForConfirms();
  return victim;
}

test(`an empty-filter split of a workload without ${WHOLE_QUEUE_ANNOTATION}=true is Rejected naming the annotation; the workload is untouched`, async () => {
  const { kc, namespace } = fx;
  const before = await readWorkload();
  const split = await createSplit(kc, namespace, {
    workload: WORKLOAD,
    queues: ['orders'],
    filter: {},
    owner: 'lee',
  });
  const rejected = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Rejected', 60_000);
  const condition = rejected.status?.conditions?.[0];
  assert.equal(condition?.reason, 'WholeQueueNotAllowed');
  assert.match(condition?.message ?? '', /takes every message/);
  assert.match(
    condition?.message ?? '',
    new RegExp(`annotate deployment/${WORKLOAD} ${WHOLE_QUEUE_ANNOTATION}=true`),
  );
  assertUntouched(before, await readWorkload());
  assert.equal(await configMap(names.stateConfigMap), undefined, 'no state was created');
  await removeSplit(kc, namespace, split.metadata.name);
});

test('a "__proto__" filter key is refused by the API server (the CRD\'s CEL rule), before any tool drops it', async () => {
  const { kc, namespace } = fx;
  await assert.rejects(
    createSplit(kc, namespace, {
      workload: WORKLOAD,
      queues: ['orders'],
      filter: JSON.parse('{"__proto__":"x"}') as Record<string, string>,
      owner: 'lee',
    }),
    (err: unknown) => {
      const e = err as { code?: number; body?: unknown };
      const body = typeof e.body === 'string' ? e.body : JSON.stringify(e.body);
      assert.equal(e.code, 422, body);
      assert.match(body, /reserved key \\?"__proto__\\?"/);
      return true;
    },
  );
});

test('a split the CRD admits but the full validator refuses (a 400-byte filter key) is Rejected as InvalidSpec; the workload is untouched', async () => {
  const { kc, namespace } = fx;
  const before = await readWorkload();
  // 200 characters pass the CRD's maxLength (characters); 400 bytes are over the AMQP limit.
  const split = await createSplit(kc, namespace, {
    workload: WORKLOAD,
    queues: ['orders'],
    filter: { ['é'.repeat(200)]: 'lee' },
    owner: 'lee',
  });
  const rejected = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Rejected', 60_000);
  const condition = rejected.status?.conditions?.[0];
  assert.equal(condition?.reason, 'InvalidSpec');
  assert.match(condition?.message ?? '', /spec\.filter.*longer than 255 bytes/);
  assert.match(condition?.message ?? '', /Fix: Use a shorter header name/);
  assertUntouched(before, await readWorkload());
  assert.equal(await configMap(names.stateConfigMap), undefined, 'no state was created');
  await removeSplit(kc, namespace, split.metadata.name);
});

/** Plants a state document the controller did not write, then asks for lee's split over it. */
async function splitOverPlantedState(stateText: string) {
  await fx.kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({
    namespace: fx.namespace,
    body: {
      metadata: {
        name: names.stateConfigMap,
        labels: { 'queuesplit.dev/state': 'true', 'queuesplit.dev/workload': WORKLOAD },
      },
      data: { [STATE_KEY]: stateText },
    },
  });
  return splitFor(fx.kc, fx.namespace, { workload: WORKLOAD, user: 'lee' });
}

/** A few more passes: still nothing written over the planted state (`kept` says so), nothing
 * done to the workload. */
async function assertKeptAsPlanted(text: string, kept: string, before: V1Deployment): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  assert.equal((await configMap(names.stateConfigMap))?.data?.[STATE_KEY], text, kept);
  assertUntouched(before, await readWorkload());
}

/** lee's split gone, then the state planted under it. */
async function removePlanted(split: string): Promise<void> {
  await removeSplit(fx.kc, fx.namespace, split);
  await core().deleteNamespacedConfigMap({ name: names.stateConfigMap, namespace: fx.namespace });
}

test('a corrupt state ConfigMap makes the split Degraded (StateUnreadable) and is not overwritten; the workload is untouched', async () => {
  const { kc, namespace } = fx;
  const before = await readWorkload();
  const corrupt = '{"apiVersion":"queuesplit.dev/state/v1","phase":"ACT';
  const split = await splitOverPlantedState(corrupt);
  const degraded = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Degraded', 60_000);
  const condition = degraded.status?.conditions?.[0];
  assert.equal(condition?.reason, 'StateUnreadable');
  assert.match(
    condition?.message ?? '',
    new RegExp(`${names.stateConfigMap} cannot be read .*not valid JSON`),
  );
  assert.match(degraded.status?.nextAction ?? '', /Nothing was changed\. Restore the ConfigMap/);
  await assertKeptAsPlanted(corrupt, 'the state was kept as found', before);
  await removePlanted(split.metadata.name);
});

test("a forged state document (well-formed, naming another team's queue for cleanup) is not loaded: the split is Degraded (StateUnsealed) and nothing changes", async () => {
  const { kc, namespace, ch } = fx;
  const before = await readWorkload();
  const victim = await victimQueue(ch);
  const install = await core().readNamespacedConfigMap({
    name: 'queuesplit-install',
    namespace: testInstall.namespace,
  });
  const forged = initialState({
    workload: { kind: 'Deployment', namespace, name: WORKLOAD, uid: before.metadata!.uid! },
    installId: install.data!.installId!,
    queues: { orders: 'rabbitmq' },
  });
  forged.inventory.push({ provider: 'rabbitmq', kind: 'queue', name: victim, queue: 'orders', epoch: 0 });
  const text = serializeState(forged);
  const split = await splitOverPlantedState(text);
  const degraded = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Degraded', 60_000);
  const condition = degraded.status?.conditions?.[0];
  assert.equal(condition?.reason, 'StateUnsealed');
  assert.match(condition?.message ?? '', /is not one this controller wrote/);
  await assertKeptAsPlanted(text, 'the document was kept as found', before);
  assert.equal((await ch.checkQueue(victim)).messageCount, 1, 'the queue it named was not touched');
  await ch.deleteQueue(victim);
  await removePlanted(split.metadata.name);
});

test(`with ${WHOLE_QUEUE_ANNOTATION}=true a whole-queue split activates; a forged desired document (a broker name pointed elsewhere; or, names intact, a public key, filter or source rewritten) is then refused by the queue-agent, reported, and replaced; a malformed observed document is reported instead of wedging the workload`, async () => {
  const { kc, namespace, ch } = fx;
  const apps = kc.makeApiClient(AppsV1Api);
  const victim = await victimQueue(ch);
  // The workload's owner opts in; the same empty filter that was refused above is now accepted.
  await apps.patchNamespacedDeployment(
    { name: WORKLOAD, namespace, body: { metadata: { annotations: { [WHOLE_QUEUE_ANNOTATION]: 'true' } } } },
    mergePatch,
  );
  const split = await createSplit(kc, namespace, {
    workload: WORKLOAD,
    queues: ['orders'],
    filter: {},
    owner: 'lee',
  });
  await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', 180_000);
  const statuses = await watchSplit(split.metadata.name);

  // 1. Forge: the app shadow (which cleanup deletes) renamed to another team's queue.
  const original = (await configMap(names.stateConfigMap))!.data![DESIRED_KEY]!;
  await replaceKey(names.stateConfigMap, DESIRED_KEY, (text) => {
    const doc = JSON.parse(text!) as { queues: { names: { appShadow: string } }[] };
    doc.queues[0]!.names.appShadow = victim;
    return JSON.stringify(doc);
  });
  // Watched, not polled: the controller restores its document within a pass or two, so the
  // Degraded status may last only a moment.
  const refused = await statuses.next((s) => s.status?.conditions?.[0]?.reason === 'DesiredRefused', 60_000);
  assert.equal(refused?.status?.phase, 'Degraded');
  assert.match(
    refused?.status?.conditions?.[0]?.message ?? '',
    // The seal is checked first (the names are recomputed too, core/agentDocuments.ts).
    /refused the desired document and acted on none of it: the desired document is not one the controller wrote/,
  );
  // The controller writes its own document back; the agent accepts it and the split recovers.
  await pollUntil(
    'the desired document is the controller’s again',
    async () => (await configMap(names.stateConfigMap))?.data?.[DESIRED_KEY],
    (text) => text === original,
    30_000,
  );
  await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', 60_000);
  const kept = await ch.checkQueue(victim);
  assert.equal(kept.messageCount, 1, 'the forged name was never acted on');

  // 1b. Fields the agent cannot recompute, each rewritten with every name intact (README "Trust
  // boundaries": the desired document is sealed too): a public key of the forger's own, a
  // filter, the source. The seal does not list the document, so the agent refuses it, and
  // nothing is routed differently.
  type Doc = {
    generation: number;
    routes: { publicKey?: string; filter: Record<string, string> }[];
    queues: { source: string }[];
  };
  const observedGeneration = async () =>
    (
      JSON.parse((await configMap(names.agentStatusConfigMap))!.data![OBSERVED_KEY]!) as {
        observedGeneration: number;
      }
    ).observedGeneration;
  const generationBefore = await observedGeneration();
  const tampers: [string, (doc: Doc) => void][] = [
    ["the route's public key", (doc) => (doc.routes[0]!.publicKey = sessionPublicKey(newSessionSecret()))],
    ["the route's filter", (doc) => (doc.routes[0]!.filter = { 'x-forged': 'yes' })],
    ["the queue's source", (doc) => (doc.queues[0]!.source = victim)],
  ];
  for (const [what, tamper] of tampers) {
    const from = statuses.mark();
    await replaceKey(names.stateConfigMap, DESIRED_KEY, (text) => {
      const doc = JSON.parse(text!) as Doc;
      tamper(doc);
      return JSON.stringify(doc);
    });
    const unsealed = await statuses.next(
      (s) => s.status?.conditions?.[0]?.reason === 'DesiredRefused',
      60_000,
      from,
    );
    assert.match(
      unsealed.status?.conditions?.[0]?.message ?? '',
      /refused the desired document and acted on none of it: the desired document is not one the controller wrote: its digest is not in the seal ConfigMap [a-z0-9-]+\/qs-seal-/,
      what,
    );
    await pollUntil(
      `the desired document is the controller’s again after ${what} was forged`,
      async () => (await configMap(names.stateConfigMap))?.data?.[DESIRED_KEY],
      (text) => text === original,
      30_000,
    );
    await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', 60_000);
  }
  assert.equal(await observedGeneration(), generationBefore, 'the agent installed nothing the forger wrote');
  assert.equal((await ch.checkQueue(victim)).messageCount, 1, 'the forged source was never read');

  // 2. A malformed observed document: Degraded with the cause, no pass throws.
  await replaceKey(
    names.agentStatusConfigMap,
    OBSERVED_KEY,
    () => '{"apiVersion":"queuesplit.dev/observed/v1","queues":',
  );
  const unreadable = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Degraded', 60_000);
  assert.equal(unreadable.status?.conditions?.[0]?.reason, 'ObservedUnreadable');
  assert.match(
    unreadable.status?.nextAction ?? '',
    new RegExp(`rollout restart deployment/${names.agentDeployment}`),
  );
  // The safe action named there: restart the queue-agent, which rewrites its document.
  await apps.patchNamespacedDeployment(
    {
      name: names.agentDeployment,
      namespace,
      body: { spec: { template: { metadata: { annotations: { 'test/restarted': String(Date.now()) } } } } },
    },
    mergePatch,
  );
  await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', 120_000);
  statuses.stop();
  await removeSplit(kc, namespace, split.metadata.name);
  await ch.deleteQueue(victim);
});
