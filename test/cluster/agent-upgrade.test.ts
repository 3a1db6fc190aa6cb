// test-group: serial (upgrades the shared controller)
// A controller upgrade during a split (README "When the queue-agent restarts"): the new controller,
// installed with another agent image, brings the running queue-agent to it (its Deployment is
// replaced; the agent restarts from its checkpoints as after a crash) while traffic flows. Nothing
// is lost, and the handback completes on the new image. No controller of the old settings leads
// once the upgrade began: each old replica stops on its SIGTERM (a standby too, though Node as
// pid 1 ignores an unhandled SIGTERM) and the Deployment is recreated, not rolled
// (deploy/manifests.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { installController, testInstall } from '../../deploy/install';
import { CONTROLLER_SELECTOR } from '../../deploy/manifests';
import { podLogLines } from '../env/k8s/node/realNode';
import { agentPods } from '../support/agentMetrics';
import { clusterFixture } from '../support/clusterFixture';
import { pollUntil } from '../support/poll';
import { publishTo, rabbitApp, waitForAppReceived } from '../support/rabbitSplit';
import { activeSplit, removeSplit, waitForSplitPhase } from '../support/splits';

/** The same build under another name (test/env/k8s/node/images/build.sh tags it). */
const NEW_IMAGE = 'queuesplit/agent:upgrade';
const fx = clusterFixture('qs-upgrade', { rabbitmq: true });
fx.defer(() => installController(fx.kc)); // the suite's controller for the files that follow

/** What a controller pod logged (the node keeps the logs of pods that are gone). */
const controllerEvents = (pod: string): { time: number; event: string }[] =>
  podLogLines(testInstall.namespace, pod, 'controller').flatMap((line) => {
    try {
      const record = JSON.parse(line) as { time: string; event: string };
      return [{ time: Date.parse(record.time), event: record.event }];
    } catch {
      return []; // Node's own warnings
    }
  });

test('a controller upgrade to another agent image rolls the running queue-agent to it during traffic: nothing lost, the handback completes', async () => {
  const { kc, namespace, ch } = fx;
  const source = await rabbitApp(fx, 'upgrade-app');
  const split = await activeSplit(kc, namespace, { workload: 'upgrade-app', user: 'uma' });
  const imageOf = async () =>
    (await agentPods(kc, namespace, 'upgrade-app')).map((p) => p.spec?.containers[0]?.image ?? '');
  assert.deepEqual(await imageOf(), [testInstall.image]);

  // Traffic the whole time: a team message and one of uma's every 100 ms.
  const sent: string[] = [];
  let flowing = true;
  const traffic = (async () => {
    for (let i = 0; flowing; i++) {
      const team = `${source}-team-${i}`;
      const uma = `${source}-uma-${i}`;
      await publishTo(ch, source, [team]);
      await publishTo(ch, source, [uma], 'uma');
      sent.push(team, uma);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();

  await new Promise((r) => setTimeout(r, 2_000));
  const oldControllers = (
    await kc.makeApiClient(CoreV1Api).listNamespacedPod({
      namespace: testInstall.namespace,
      labelSelector: CONTROLLER_SELECTOR,
    })
  ).items.map((p) => p.metadata!.name!);
  assert.equal(oldControllers.length, testInstall.replicas, 'a leader and a standby before the upgrade');
  const upgradeStarted = Date.now();
  await installController(kc, { ...testInstall, agentImage: NEW_IMAGE });
  for (const pod of oldControllers) {
    const events = controllerEvents(pod);
    assert.ok(
      !events.some((e) => e.event === 'leader.acquired' && e.time >= upgradeStarted),
      `${pod}, of the old settings, took the lead during the upgrade`,
    );
    const stopped = events.find((e) => e.event === 'controller.stopped');
    assert.ok(
      stopped && stopped.time - upgradeStarted < 15_000,
      `${pod} stopped on its SIGTERM, not killed after the grace period (${JSON.stringify(events.slice(-3))})`,
    );
  }
  await pollUntil(
    'the queue-agent runs the new image, ready',
    async () =>
      (await agentPods(kc, namespace, 'upgrade-app')).filter(
        (p) =>
          p.spec?.containers[0]?.image === NEW_IMAGE &&
          (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length,
    (n) => n === 1,
    120_000,
  );
  const deployment = (await kc.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace })).items.find(
    (d) => d.metadata?.name?.startsWith('qs-agent-'),
  );
  assert.equal(deployment?.spec?.template.spec?.containers[0]?.image, NEW_IMAGE);
  await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active');
  await new Promise((r) => setTimeout(r, 3_000)); // traffic through the upgraded agent
  flowing = false;
  await traffic;

  // Nobody reads uma's session shadow: the handback gives the app every message, hers too.
  await removeSplit(kc, namespace, split.metadata.name, 180_000);
  await waitForAppReceived(
    `the app processed all ${sent.length} messages sent across the upgrade`,
    sent,
    180_000,
    source,
  );
});
