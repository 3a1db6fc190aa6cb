// Drift (docs/design.md, "Drift"): while a workload is split, someone — a person, a GitOps sync —
// puts its consumer env back to the source. The app then reads its source beside the split, so
// the controller must say so (Degraded on the split and on the workload, with the safe action)
// instead of reporting Active; nothing may be lost, and after the operator's retry the handback
// must still give every message to someone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppsV1Api } from '@kubernetes/client-node';
import { RETRY_ANNOTATION } from '../../core/state/operatorRetry';
import { clusterFixture } from '../support/clusterFixture';
import { readWorkloadStatus } from '../support/handback';
import { pollUntil } from '../support/poll';
import {
  appReceived,
  consumeQueueIds,
  ids,
  publishTo,
  rabbitApp,
  waitForRabbitHandback,
} from '../support/rabbitSplit';
import { activeSplit, operatorRetry, removeSplit, waitForSplitPhase } from '../support/splits';

const APP = 'drifting';
const fx = clusterFixture('qs-drift', { rabbitmq: true });

test('the env override reverted by hand while Active: Degraded with the reason on split and workload, nothing lost, the handback still correct', async () => {
  const { kc, namespace, conn, ch } = fx;
  const source = await rabbitApp(fx, APP);
  const split = await activeSplit(kc, namespace, { workload: APP, user: 'dana' }, 180_000);
  const session = split.status!.queues![0]!.shadow!.source!;
  const mine: string[] = [];
  const local = await consumeQueueIds(conn, session, mine);

  // A person (or a GitOps sync) puts SOURCE_QUEUE back to the source queue.
  const apps = kc.makeApiClient(AppsV1Api);
  await pollUntil(
    'SOURCE_QUEUE changed back by hand (retried when the controller wrote in between)',
    async () => {
      const workload = await apps.readNamespacedDeployment({ name: APP, namespace });
      const env = workload.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'SOURCE_QUEUE')!;
      assert.notEqual(env.value, source, 'the split overrides SOURCE_QUEUE');
      env.value = source;
      await apps.replaceNamespacedDeployment({ name: APP, namespace, body: workload });
      return true;
    },
    Boolean,
    30_000,
  );

  const degraded = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Degraded', 60_000);
  const message = degraded.status?.conditions?.[0]?.message ?? '';
  assert.match(message, /env override of app\/SOURCE_QUEUE was changed/, `the reason is named: ${message}`);
  assert.match(
    message,
    new RegExp(`annotate deployment/${APP} ${RETRY_ANNOTATION}=now`),
    'the retry command',
  );
  assert.ok(!message.includes('dana'), 'no header value in the status');
  const status = await pollUntil(
    'the workload status says Degraded',
    () => readWorkloadStatus(kc, 'Deployment', namespace, APP),
    (s) => s?.phase === 'Degraded',
    60_000,
  );
  assert.match(status!.message, /SOURCE_QUEUE/, 'the workload status names the changed env');
  assert.match(status!.nextAction ?? '', /Nothing was lost/);

  // Traffic while the app reads its source beside the split: every message must land somewhere.
  const dana = ids(source, 'dana', 10);
  const plain = ids(source, 'plain', 10);
  await publishTo(ch, source, dana, 'dana');
  await publishTo(ch, source, plain);

  // The developer stops (her consumer first: a RabbitMQ route drains once nobody reads it); the
  // operator retries, which puts the override back for the handback.
  await local.close();
  await removeSplit(kc, namespace, split.metadata.name, 180_000);
  await operatorRetry(kc, namespace, APP);
  await waitForRabbitHandback(kc, namespace, APP, source, { timeoutMs: 240_000 });
  const after = ids(source, 'after', 5);
  await publishTo(ch, source, after, 'dana');
  await pollUntil(
    'every message reached the app or dana, the ones after the handback the app',
    async () => ({ app: appReceived(source), dana: new Set(mine) }),
    (got) => [...dana, ...plain, ...after].every((id) => got.app.has(id) || got.dana.has(id)),
    90_000,
  );
  // Polled, not read once: on a loaded machine the controller's next pass may still be on its way.
  await pollUntil(
    'the workload status says HandedBack',
    () => readWorkloadStatus(kc, 'Deployment', namespace, APP),
    (s) => s?.phase === 'HandedBack',
    60_000,
  );
});
