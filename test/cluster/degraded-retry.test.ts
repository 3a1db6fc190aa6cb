// test-order: first (waits out the suite's 120 s step timeout)
// A route that cannot drain does not wait silently: a developer whose consumer stays attached to
// the session shadow stops the split; after a step's time the route turns Degraded with the
// reason and the exact retry command. Once the consumer lets go, an operator's retry annotation
// drains it (the annotation is consumed), the workload is handed back, and nothing is lost.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppsV1Api } from '@kubernetes/client-node';
import { RETRY_ANNOTATION } from '../../core/state/operatorRetry';
import { clusterFixture } from '../support/clusterFixture';
import { ids, publishTo, rabbitApp, waitForAppReceived, waitForRabbitHandback } from '../support/rabbitSplit';
import {
  activeSplit,
  deleteSplit,
  operatorRetry,
  waitForSplitGone,
  waitForSplitPhase,
} from '../support/splits';

// The suite's controller, whose step timeout (120 s, deploy/install.ts) the drain waits out: a
// controller of its own with a shorter one would have to run alone, which costs the suite more.
const fx = clusterFixture('qs-degraded', { rabbitmq: true });

test('a drain blocked by an attached consumer degrades with the retry command; the operator retry finishes it', async () => {
  const { kc, namespace, conn, ch } = fx;
  const source = await rabbitApp(fx, 'stuck');
  const split = await activeSplit(kc, namespace, { workload: 'stuck', user: 'kim' });
  const shadow = split.status!.queues![0]!.shadow!.source!;
  // kim's consumer takes nothing (prefetch 1, never acks): her messages stay in the shadow.
  const local = await conn.createChannel();
  await local.prefetch(1);
  await local.consume(shadow, () => undefined);
  const kim = ids(source, 'kim', 5);
  const plain = ids(source, 'plain', 5);
  await publishTo(ch, source, kim, 'kim');
  await publishTo(ch, source, plain);

  await deleteSplit(kc, namespace, split.metadata.name);
  const degraded = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Degraded', 300_000);
  const message = degraded.status?.conditions?.[0]?.message ?? '';
  assert.match(message, /could not drain/, `the reason is named: ${message}`);
  assert.match(message, new RegExp(`annotate deployment/stuck ${RETRY_ANNOTATION}=now`), 'the retry command');
  assert.ok(!message.includes('kim'), 'no header value in the status');

  await local.close(); // the unacked message goes back to the shadow
  await operatorRetry(kc, namespace, 'stuck');
  await waitForSplitGone(kc, namespace, split.metadata.name, 240_000);
  await waitForRabbitHandback(kc, namespace, 'stuck', source);
  const workload = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'stuck', namespace });
  assert.equal(workload.metadata?.annotations?.[RETRY_ANNOTATION], undefined, 'the retry was consumed');
  await waitForAppReceived(
    "kim's kept messages and everything else reach the app after the retry",
    [...kim, ...plain],
    90_000,
    source,
  );
});
