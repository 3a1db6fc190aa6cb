// test-group: serial (kills the leading controller replica)
// kill -9 of the controller in every phase (docs/design.md §6 recovery; the lives themselves are
// test/support/crashLives.ts): the leading replica is SIGKILLed the moment each phase is
// persisted, so this is also the leader-election test. The queue-agent's kills run beside the
// other files (agent-kill.test.ts): they touch only their own namespace.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { installController, testInstall } from '../../deploy/install';
import { podLogLines } from '../env/k8s/node/realNode';
import { clusterFixture } from '../support/clusterFixture';
import { KILL_TEST, killInEveryPhase } from '../support/crashLives';
import { pollUntil } from '../support/poll';
import { controllerLeader, listControllerPods } from '../support/processes';

const fx = clusterFixture('qs-crash', { rabbitmq: true, kafka: true });
// Every kill is a failover: the successor leads only once the killed leader's Lease has gone
// unrenewed for a whole lease, so each of the fifteen kills costs about a lease. This file's
// controller has the shortest lease the controller takes (3 s, rather than the suite's 6 s, which
// allows for the load of the files that run three at a time): the same rule, waited out sooner.
// Nothing runs beside this file. The suite's controller comes back after it.
const SHORT_LEASE = { ...testInstall, extraArgs: [...testInstall.extraArgs, '--lease-seconds=3'] };
fx.setup(() => installController(fx.kc, SHORT_LEASE));
fx.defer(() => installController(fx.kc));

test('two controller replicas: exactly one leads, the other stands by', async () => {
  const { kc } = fx;
  const pods = await pollUntil(
    'two controller replicas running',
    () => listControllerPods(kc),
    (ps) => ps.filter((p) => p.status?.phase === 'Running').length === testInstall.replicas,
    60_000,
  );
  assert.equal(testInstall.replicas, 2);
  const leader = await pollUntil('a live leader', () => controllerLeader(kc), Boolean, 30_000);
  const standby = pods.find((p) => p.metadata?.name !== leader!.pod);
  assert.ok(standby, 'a second replica exists');
  const log = podLogLines(testInstall.namespace, standby.metadata!.name!, 'controller').join('\n');
  const lastStart = log.lastIndexOf('controller.waiting_for_leadership');
  assert.ok(lastStart >= 0, 'the standby waits for leadership');
  assert.ok(
    !log.slice(lastStart).includes('leader.acquired'),
    'the standby does not act while the leader lives',
  );
});

test(
  'controller kill -9 (the leader) in every phase: a replica takes over, recovers, and nothing is lost',
  KILL_TEST,
  async () => {
    const first = await controllerLeader(fx.kc);
    await killInEveryPhase(fx, 'controller', 'rmq');
    const now = await pollUntil(
      'a live leader after the kills',
      () => controllerLeader(fx.kc),
      Boolean,
      60_000,
    );
    assert.ok(now!.transitions > (first?.transitions ?? 0), 'leadership moved when its holder was killed');
  },
);
