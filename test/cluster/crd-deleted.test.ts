// test-group: serial (deletes the QueueSplit CRD)
// The QueueSplit CRD deleted while a split is Active (README "Uninstall"). Deleting a CRD deletes
// its objects: the split's finalizer holds it while its route drains, and once the last object is
// gone the CRD (and with it the QueueSplit API) disappears. The workload's handback goes on after
// that, so the controller must keep handing workloads back without the API, hold no finalizer, lose
// no message, and serve splits again once the CRD is reinstalled.
import { test } from 'node:test';
import { ApiextensionsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { installCrd } from '../../deploy/install';
import { clusterFixture } from '../support/clusterFixture';
import { readWorkloadStatus } from '../support/handback';
import { pollUntil, waitForGone } from '../support/poll';
import { ids, publishTo, rabbitApp, waitForAppReceived } from '../support/rabbitSplit';
import { activeSplit, removeSplit } from '../support/splits';
import { uniqueName } from '../support/services';

const CRD = 'queuesplits.queuesplit.dev';
const fx = clusterFixture('qs-crddel', { rabbitmq: true });
fx.defer(() => installCrd(fx.kc)); // the suites after this one need the API back, whatever happened here

test('the QueueSplit CRD deleted with a split Active: the route drains, the CRD goes, the workload is still handed back with every message, and splits work again once it is back', async () => {
  const { kc, namespace, ch } = fx;
  const crds = kc.makeApiClient(ApiextensionsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const source = await rabbitApp(fx, 'crddel-app');
  await activeSplit(kc, namespace, { workload: 'crddel-app', user: 'ana' });
  // Nobody consumes ana's session shadow: her messages wait there and must reach the app after.
  const prefix = uniqueName('crddel-msg');
  const ana = ids(prefix, 'ana', 5);
  const team = ids(prefix, 'team', 5);
  await publishTo(ch, source, ana, 'ana');
  await publishTo(ch, source, team);

  await crds.deleteCustomResourceDefinition({ name: CRD });
  await waitForGone(
    'the CRD is gone (the split drained and its finalizer was removed)',
    () => crds.readCustomResourceDefinition({ name: CRD }),
    180_000,
  );
  await pollUntil(
    'the workload is handed back after the QueueSplit API is gone',
    () => readWorkloadStatus(kc, 'Deployment', namespace, 'crddel-app'),
    (s) => s?.phase === 'HandedBack',
    180_000,
  );
  // HandedBack is written before the finalizer and the state go (coordinator.finishIfIdle), so
  // the state document may outlive that status by a pass.
  await pollUntil(
    'no split state is left',
    () => core.listNamespacedConfigMap({ namespace, labelSelector: 'queuesplit.dev/state=true' }),
    (state) => state.items.length === 0,
    30_000,
  );
  await waitForAppReceived(
    'the app processed every message, ana’s drained back from her shadow',
    [...ana, ...team],
    120_000,
    prefix,
  );

  await installCrd(kc);
  const again = await activeSplit(kc, namespace, { workload: 'crddel-app', user: 'ana' });
  await removeSplit(kc, namespace, again.metadata.name);
});
