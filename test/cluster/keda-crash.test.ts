// test-group: serial (kills the leading controller replica)
// KEDA's pause survives the controller (docs/design.md, "KEDA-scaled workloads"): the leader is
// SIGKILLed while a split waits for KEDA to confirm its pause (the annotation is on, no state
// yet), and again as the handback cleans up (the resume comes from the state's last pass). The
// next leader starts the split once KEDA confirms and resumes the ScaledObject exactly; nothing
// is lost.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterFixture } from '../support/clusterFixture';
import { assertScaledObjectAsBefore, kedaScaledApp, playKeda } from '../support/kedaContract';
import { PhaseWatch } from '../support/phaseWatch';
import { pollUntil } from '../support/poll';
import { controllerLeader } from '../support/processes';
import { ids, publishTo, waitForAppReceived, waitForRabbitHandback } from '../support/rabbitSplit';
import { removeSplit, splitFor, waitForSplitPhase } from '../support/splits';

const fx = clusterFixture('qs-keda-crash', { rabbitmq: true });

/** SIGKILLs the leading controller replica; returns once a leader (it or the other) is live. */
async function killLeader(): Promise<void> {
  const leader = await pollUntil('a live leader', () => controllerLeader(fx.kc), Boolean, 60_000);
  process.kill(leader!.pid, 'SIGKILL');
  await pollUntil(
    'a live leader after the kill',
    () => controllerLeader(fx.kc),
    (l) => l !== undefined && l.pid !== leader!.pid,
    120_000,
  );
}

test('controller kill -9 while a split waits for KEDA’s pause and again as its handback cleans up: the split starts once KEDA confirms, and the ScaledObject is resumed exactly', async () => {
  const { kc, namespace, ch } = fx;
  const { source, read } = await kedaScaledApp(fx, 'keda-crash');
  const keda = playKeda(kc, namespace, 'keda-crash', { name: 'unused', value: () => 1 });
  const watch = new PhaseWatch(kc, namespace, 'keda-crash', async (phase) => {
    if (phase === 'CLEANING_UP') await killLeader();
  });
  try {
    await pollUntil(
      'KEDA made its HPA',
      async () => keda.actions,
      (a) => a.includes('hpa made'),
      30_000,
    );
    const before = await read();
    keda.hold = true;
    const split = await splitFor(kc, namespace, { workload: 'keda-crash', user: 'ivy' });
    await pollUntil(
      'the split asked KEDA to pause',
      read,
      (so) => so.metadata.annotations?.['autoscaling.keda.sh/paused'] === 'true',
      30_000,
    );
    await killLeader();
    keda.hold = false;
    await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', 240_000);
    const plain = ids(source, 'plain', 5);
    await publishTo(ch, source, plain);
    await waitForAppReceived('the app processed its messages while split', plain, 60_000, source);

    watch.start();
    await removeSplit(kc, namespace, split.metadata.name, 240_000);
    await waitForRabbitHandback(kc, namespace, 'keda-crash', source, { timeoutMs: 240_000 });
    console.log(`phases: ${watch.describe()}; KEDA: ${keda.actions.join(', ')}`);
    await pollUntil(
      'the ScaledObject resumed (our annotation, mark and label gone)',
      read,
      (so) => so.metadata.annotations?.['autoscaling.keda.sh/paused'] === undefined,
      60_000,
    );
    assertScaledObjectAsBefore(await read(), before);
    await pollUntil(
      'KEDA, resumed, made its HPA again',
      async () => keda.actions.filter((a) => a === 'hpa made').length,
      (n) => n >= 2,
      30_000,
    );
    const after = ids(source, 'after', 5);
    await publishTo(ch, source, after, 'ivy');
    await waitForAppReceived('the app reads its source again', after, 60_000, source, source);
    assert.ok(!keda.actions.some((a) => a.startsWith('error')), keda.actions.join(', '));
  } finally {
    watch.stop();
    await keda.stop();
  }
});
