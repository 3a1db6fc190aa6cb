// Deleting the namespace of a workload with a live split (README "Uninstall": a namespace deleted
// mid-split): no queue-agent can run in a terminating namespace, so no handback can finish there.
// The namespace must still go away (no finalizer held forever), and every broker resource of the
// split — the session shadow with its unread messages among them — is recorded with the safe action
// in the controller's own namespace, where the record survives; the messages stay on the broker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { testInstall } from '../../deploy/install';
import { CLEANUP_KEY, STATE_KEY } from '../../core/agentProtocol';
import { parseState } from '../../core/state/stateDocument';
import { clusterFixture } from '../support/clusterFixture';
import { pollUntil, waitForGone } from '../support/poll';
import { getQueue } from '../support/rabbitManagement';
import { ids, publishTo, rabbitApp } from '../support/rabbitSplit';
import { activeSplit } from '../support/splits';

const fx = clusterFixture('qs-nsdel', { rabbitmq: true });
const recordSelector = () => `queuesplit.dev/cleanup=true,queuesplit.dev/workload-namespace=${fx.namespace}`;
fx.defer(async () => {
  await fx.kc
    .makeApiClient(CoreV1Api)
    .deleteCollectionNamespacedConfigMap({
      namespace: testInstall.namespace,
      labelSelector: recordSelector(),
    })
    .catch(() => undefined);
});

test('deleting the namespace of a live split: the namespace goes, every shadow is recorded in the controller namespace, the messages stay', async () => {
  const { kc, namespace, ch, services } = fx;
  const core = kc.makeApiClient(CoreV1Api);
  const source = await rabbitApp(fx, 'nsdel-app');
  const active = await activeSplit(kc, namespace, { workload: 'nsdel-app', user: 'ana' });
  const shadow = active.status!.queues![0]!.shadow!.source!;
  // Nobody consumes ana's session shadow: her messages wait there, unread.
  const ana = ids(source, 'ana', 5);
  await publishTo(ch, source, ana, 'ana');
  await pollUntil(
    "ana's messages wait in her session shadow",
    () => getQueue(services.rabbitManagementUrl, shadow),
    (q) => (q.messages_ready ?? 0) === ana.length,
  );
  const stateMaps = await core.listNamespacedConfigMap({
    namespace,
    labelSelector: 'queuesplit.dev/state=true',
  });
  const state = parseState(stateMaps.items[0]?.data?.[STATE_KEY] ?? '');
  assert.ok(state.ok, 'the split state is readable before the namespace is deleted');
  const inventory = state.value.inventory.map((r) => r.name);
  assert.ok(inventory.includes(shadow), 'the session shadow is in the inventory');

  await core.deleteNamespace({ name: namespace });
  await waitForGone(
    'the namespace finishes terminating (no finalizer holds it)',
    () => core.readNamespace({ name: namespace }),
    90_000,
  );

  const records = await core.listNamespacedConfigMap({
    namespace: testInstall.namespace,
    labelSelector: recordSelector(),
  });
  assert.equal(records.items.length, 1, 'one record in the controller namespace');
  const data = records.items[0]!.data ?? {};
  const recorded = JSON.parse(data[CLEANUP_KEY] ?? '[]') as { name: string; reason: string }[];
  for (const name of inventory) {
    assert.ok(
      recorded.some((r) => r.name === name),
      `broker resource ${name} is recorded: ${data[CLEANUP_KEY]}`,
    );
  }
  assert.match(recorded.find((r) => r.name === shadow)!.reason, /namespace .* was deleted/);
  assert.match(data.safeAction ?? '', /may hold messages/);
  assert.ok(!JSON.stringify(data).includes('ana'), 'no header value in the record');
  const events = await core.listNamespacedEvent({
    namespace: testInstall.namespace,
    fieldSelector: `involvedObject.kind=ConfigMap,involvedObject.name=${records.items[0]!.metadata!.name}`,
  });
  assert.ok(
    events.items.some((e) => e.reason === 'NamespaceDeletedDuringSplit' && e.type === 'Warning'),
    'a Warning Event points at the record',
  );
  const kept = await getQueue(services.rabbitManagementUrl, shadow);
  assert.equal(kept.messages_ready, ana.length, "ana's messages stay on the broker, listed in the record");
});
