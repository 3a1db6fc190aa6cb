// kill -9 in every phase (DESIGN §6 recovery): a split's whole life — activation, ACTIVE,
// handback — runs while the test watches the state document and, the moment each phase is
// persisted, SIGKILLs the process under test: the leading controller replica (two run, so this
// is also the leader-election test) or the workload's queue-agent. Traffic flows the whole time;
// the fixture app's records and the developer's own consumer prove every message arrived
// somewhere and none of the developer's reached anyone else's consumer while split.
//
// A phase can end before the process is found (a short phase, or the target still restarting):
// that kill is not counted, and another split's life tries again for the phases not yet hit.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import * as amqp from 'amqplib';
import { AppsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { installController, testInstall } from '../../deploy/install';
import { runDir } from '../env/paths';
import { adminConfig, createNamespace, deleteNamespace, waitForReadyPods } from '../support/kube';
import { PhaseWatch } from '../support/phaseWatch';
import { pollUntil } from '../support/poll';
import { controllerLeader, listControllerPods, queueAgentPid } from '../support/processes';
import { appReceived, deployRabbitApp } from '../support/rabbitSplit';
import { createSplit, deleteSplit, waitForSplitGone, waitForSplitPhase } from '../support/splits';
import { loadServices, uniqueName } from '../support/services';

const services = loadServices();
let kc: KubeConfig;
let namespace: string;
let conn: amqp.ChannelModel;

const ACTIVATION = ['PREPARING', 'QUIESCING_APP', 'STARTING_PUMP', 'REDIRECTING_APP', 'ACTIVE'];
const HANDBACK = [
  'STOPPING_SOURCE',
  'DRAINING_APP',
  'QUIESCING_FOR_HANDBACK',
  'COMMITTING_HANDOFF',
  'RESTORING_APP',
  'CLEANING_UP',
];
const EVERY_PHASE = [...ACTIVATION, ...HANDBACK];
const ROUNDS = 3;

type Target = 'controller' | 'queue-agent';

before(async () => {
  kc = adminConfig(services.kubeconfig);
  await installController(kc);
  namespace = await createNamespace(kc, 'qs-crash');
  conn = await amqp.connect(services.amqpUrl);
});
after(async () => {
  await conn?.close().catch(() => undefined);
  await deleteNamespace(kc, namespace);
});

/** Publishes a plain and a developer-header message every 100 ms until stopped. */
function traffic(ch: amqp.ConfirmChannel, source: string, user: string) {
  const plain: string[] = [];
  const mine: string[] = [];
  let running = true;
  const done = (async () => {
    for (let i = 0; running; i++) {
      const id = `${source}-${i % 2 ? user : 'plain'}-${i}`;
      (i % 2 ? mine : plain).push(id);
      ch.sendToQueue(source, Buffer.from(`body ${id}`), {
        messageId: id,
        persistent: true,
        headers: i % 2 ? { 'x-queue-split-user': user } : {},
      });
      await ch.waitForConfirms();
      await sleep(100);
    }
  })();
  return {
    plain,
    mine,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

async function livePid(target: Target, workload: string): Promise<number | undefined> {
  if (target === 'controller') return (await controllerLeader(kc))?.pid;
  return queueAgentPid(kc, namespace, workload);
}

interface Kill {
  phase: string;
  pid: number;
  /** The state document still said `phase` right after the kill. */
  confirmed: boolean;
}

/** One split's life with a kill at the start of each wanted phase; returns the kills made. */
async function lifecycle(target: Target, wanted: readonly string[], round: number): Promise<Kill[]> {
  const name = `crash-${target === 'controller' ? 'ctl' : 'agt'}-${round}`;
  const user = `ivy${round}`;
  const source = uniqueName(name);
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(source, { durable: true });
  await deployRabbitApp(kc, services, namespace, name, source);

  const kills: Kill[] = [];
  const watch = new PhaseWatch(kc, namespace, name, async (phase) => {
    if (!wanted.includes(phase)) return;
    // The target may be starting (a queue-agent in PREPARING) or restarting after the last kill.
    for (let waited = 0; watch.phase === phase && waited < 30_000; waited += 100) {
      const pid = await livePid(target, name);
      if (pid) {
        process.kill(pid, 'SIGKILL');
        kills.push({ phase, pid, confirmed: watch.phase === phase });
        return;
      }
      await sleep(100);
    }
  });
  watch.start();
  const flow = traffic(ch, source, user);
  const mineReceived: string[] = [];
  const local = await conn.createChannel();
  try {
    const split = await createSplit(kc, namespace, {
      workload: name,
      queues: ['orders'],
      filter: { 'x-queue-split-user': user },
      owner: user,
    });
    const active = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', 300_000);
    const { consumerTag } = await local.consume(active.status!.queues![0]!.shadow!.source!, (m) => {
      if (!m) return;
      mineReceived.push(String(m.properties.messageId));
      local.ack(m);
    });
    await sleep(3000); // traffic through the split while ACTIVE
    // As the sidecar does when a split stops: the route drains once its consumer has let go.
    await local.cancel(consumerTag);
    await deleteSplit(kc, namespace, split.metadata.name);
    await waitForSplitGone(kc, namespace, split.metadata.name, 300_000);
    const apps = kc.makeApiClient(AppsV1Api);
    await pollUntil(
      'the workload is handed back (original env, no finalizer, state document removed)',
      () => apps.readNamespacedDeployment({ name, namespace }),
      (d) =>
        watch.phase === '' &&
        d.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'SOURCE_QUEUE')?.value === source &&
        !(d.metadata?.finalizers ?? []).includes('queuesplit.dev/handback'),
      300_000,
    );
    await waitForReadyPods(kc, namespace, name, 1);
    await flow.stop();
    const published = [...flow.plain, ...flow.mine];
    const delivered = await pollUntil(
      `every one of ${published.length} messages published during the kills was delivered`,
      async () => new Set([...appReceived(source), ...mineReceived]),
      (got) => published.every((id) => got.has(id)),
      120_000,
    ).catch((err: unknown) => {
      const got = new Set([...appReceived(source), ...mineReceived]);
      const lost = published.filter((id) => !got.has(id));
      throw new Error(`${String(err)}\nnot delivered: ${lost.slice(0, 20).join(', ')}`);
    });
    assert.ok(delivered.size >= published.length);
    const strangers = mineReceived.filter((id) => !flow.mine.includes(id));
    assert.deepEqual(strangers, [], `${user}'s consumer received only ${user}'s messages`);
    console.log(
      `${target} round ${round}: ${published.length} messages (${flow.mine.length} with ${user}'s header, ` +
        `${new Set(mineReceived).size} reached ${user}); kills: ` +
        kills.map((k) => `${k.phase}${k.confirmed ? '' : ' (phase had moved on)'}`).join(', '),
    );
    console.log(`${target} round ${round} timeline: ${watch.describe()}`);
    return kills;
  } finally {
    watch.stop();
    await flow.stop();
    await local.close().catch(() => undefined);
    await ch.close().catch(() => undefined);
  }
}

async function killInEveryPhase(target: Target): Promise<void> {
  const hit = new Set<string>();
  for (let round = 1; round <= ROUNDS; round++) {
    const missing = EVERY_PHASE.filter((p) => !hit.has(p));
    if (missing.length === 0) break;
    for (const k of await lifecycle(target, missing, round)) if (k.confirmed) hit.add(k.phase);
  }
  assert.deepEqual(
    EVERY_PHASE.filter((p) => !hit.has(p)),
    [],
    `a ${target} kill landed in every phase within ${ROUNDS} split lives`,
  );
}

test('two controller replicas: exactly one leads, the other stands by', async () => {
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
  const log = fs.readFileSync(
    path.join(runDir, 'kubelet', 'logs', `${testInstall.namespace}_${standby.metadata!.name}_controller.log`),
    'utf8',
  );
  const lastStart = log.lastIndexOf('controller.waiting_for_leadership');
  assert.ok(lastStart >= 0, 'the standby waits for leadership');
  assert.ok(
    !log.slice(lastStart).includes('leader.acquired'),
    'the standby does not act while the leader lives',
  );
});

// Up to three split lives with restarts and backoffs: longer than the suite's default timeout.
const KILL_TEST = { timeout: 25 * 60_000 };

test(
  'controller kill -9 (the leader) in every phase: a replica takes over, recovers, and nothing is lost',
  KILL_TEST,
  async () => {
    const first = await controllerLeader(kc);
    await killInEveryPhase('controller');
    const now = await pollUntil('a live leader after the kills', () => controllerLeader(kc), Boolean, 60_000);
    assert.ok(now!.transitions > (first?.transitions ?? 0), 'leadership moved when its holder was killed');
  },
);

test(
  'queue-agent kill -9 in every phase: it restarts, resumes from its checkpoints, and nothing is lost',
  KILL_TEST,
  async () => {
    await killInEveryPhase('queue-agent');
  },
);
