// A queue-agent its namespace will not run is never silent: a pod the namespace's admission
// refuses and a failing readiness probe each take the split to Degraded (the app was never
// quiesced: it keeps its messages), with the cause read from the agent's events and pod status
// and the safe next action; fixing the cause and retrying ends the split cleanly. Both come from
// the namespace alone, so they run beside the other files on the suite's controller; what needs
// other controller settings is agent-start-failures.test.ts.
import { test } from 'node:test';
import { CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { kubernetesObjectNames } from '../../core/names';
import { testInstall } from '../../deploy/install';
import { AgentStartFailures } from '../support/agentStartFailure';
import { clusterFixture } from '../support/clusterFixture';
import { pollUntil } from '../support/poll';

const fx = clusterFixture('qs-agent-refused', { rabbitmq: true });
const failures = new AgentStartFailures(fx);

test('an agent pod the namespace refuses: Degraded at once with the admission message', async () => {
  const { kc, namespace } = fx;
  const core = kc.makeApiClient(CoreV1Api);
  const limits = 'agent-too-big';
  const s = await failures.startSplit('refused', async () => {
    await core.createNamespacedLimitRange({
      namespace,
      body: {
        metadata: { name: limits },
        spec: { limits: [{ type: 'Container', max: { memory: '256Mi' } }] },
      },
    });
    // The LimitRange admission plugin reads LimitRanges from a cache: a pod created the moment
    // after may still be admitted (one run saw an agent pod admitted, its sibling refused).
    // The split starts once a dry-run pod over the limit is refused, as the agent's will be.
    await pollUntil(
      'the new LimitRange refuses a pod over its limit',
      () =>
        core
          .createNamespacedPod({
            namespace,
            dryRun: 'All',
            body: {
              metadata: { name: 'limit-probe' },
              spec: {
                containers: [{ name: 'c', image: 'none', resources: { limits: { memory: '512Mi' } } }],
              },
            },
          })
          .then(
            () => '',
            (err: unknown) => String((err as { body?: unknown }).body ?? err),
          ),
      (refusal) => /maximum memory usage/.test(refusal),
      30_000,
    );
  });
  await failures.assertDegradedKeepingMessages(
    s,
    /refused the queue-agent pod.*maximum memory usage/,
    60_000,
  );
  await core.deleteNamespacedLimitRange({ name: limits, namespace });
  await failures.retryAndEnd(s);
});

test('an agent failing its readiness probe: Degraded after the agent start timeout, naming the probe', async () => {
  // The agent's Role exists already, without rules: it runs but cannot read its desired document,
  // so /readyz answers 503 (the controller keeps an existing Role; deleting it is the fix).
  const { kc, namespace } = fx;
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  let role = '';
  const s = await failures.startSplit('unready', async (uid) => {
    const install = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'queuesplit-install', namespace: testInstall.namespace });
    role = kubernetesObjectNames({
      installId: install.data!.installId!,
      workloadUid: uid,
      workloadName: 'unready',
    }).agentServiceAccount;
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name: role }, rules: [] } });
  });
  await failures.assertDegradedKeepingMessages(
    s,
    /does not pass its readiness probe.*Readiness probe failed: HTTP probe failed with statuscode: 503/,
    120_000,
  );
  await rbac.deleteNamespacedRole({ name: role, namespace });
  await failures.retryAndEnd(s);
});
