// test-group: serial (kills the leading controller replica)
// kill -9 in every phase (docs/design.md §6 recovery): a split's whole life — activation, ACTIVE with a
// teammate's route attaching and draining, handback — runs while the test watches the state document and, the moment each phase is
// persisted, SIGKILLs the process under test: the leading controller replica (two run, so this
// is also the leader-election test) or the workload's queue-agent. Traffic flows the whole time;
// the fixture app's records and the developer's own consumer prove every message arrived
// somewhere and none of the developer's reached anyone else's consumer while split.
//
// A phase can end before the process is found (a short phase, or the target still restarting):
// that kill is not counted, and another split's life tries again for the phases not yet hit.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as amqp from 'amqplib';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Kafka, Producer } from 'kafkajs';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { deployShop } from '../support/shop';
import { installController, testInstall } from '../../deploy/install';
import { podLogLines } from '../env/k8s/node/realNode';
import { adminConfig, createNamespace, deleteNamespace } from '../support/kube';
import { PhaseWatch } from '../support/phaseWatch';
import { pollUntil, sleep } from '../support/poll';
import { controllerLeader, listControllerPods, queueAgentPid } from '../support/processes';
import { appReceived, deployRabbitApp, publishTo } from '../support/rabbitSplit';
import { connectProducer, consumeIds, kafkaClient, produceIds } from '../support/kafkaSplit';
import { waitForHandback } from '../support/handback';
import { createSplit, deleteSplit, waitForSplitGone, waitForSplitPhase } from '../support/splits';
import { loadServices, uniqueName } from '../support/services';

const services = loadServices();
let kc: KubeConfig;
let namespace: string;
let conn: amqp.ChannelModel;
let kafka: Kafka;
let producer: Producer;

const ACTIVATION = ['PREPARING', 'QUIESCING_APP', 'STARTING_PUMP', 'REDIRECTING_APP', 'ACTIVE'];
const HANDBACK = [
  'STOPPING_SOURCE',
  'DRAINING_APP',
  'QUIESCING_FOR_HANDBACK',
  'COMMITTING_HANDOFF',
  'RESTORING_APP',
  'CLEANING_UP',
];
// A route attaching to and draining from an ACTIVE queue (a second developer comes and goes).
const ROUTE_PHASES = ['route:ATTACHING', 'route:DRAINING'];
const EVERY_PHASE = [...ACTIVATION, ...ROUTE_PHASES, ...HANDBACK];
const ROUNDS = 3;

type Target = 'controller' | 'queue-agent';

before(async () => {
  kc = adminConfig(services.kubeconfig);
  await installController(kc);
  namespace = await createNamespace(kc, 'qs-crash');
  conn = await amqp.connect(services.amqpUrl);
  kafka = kafkaClient(services, 'crash-recovery-test');
  producer = await connectProducer(kafka);
});
after(async () => {
  await producer?.disconnect().catch(() => undefined);
  await conn?.close().catch(() => undefined);
  await deleteNamespace(kc, namespace);
});

/** A workload under test: how to deploy it, feed it, read a developer's shadows, and check it. */
interface Subject {
  name: string;
  queues: string[];
  /** Sends message `i` (with the developer's header when `user` is set); returns its id. */
  send(i: number, user?: string): Promise<string>;
  /** Starts reading the developer's session shadows named by the Active status. */
  attach(split: QueueSplit, sink: string[]): Promise<() => Promise<void>>;
  appReceived(): Set<string>;
  handedBack(): Promise<void>;
  close(): Promise<void>;
}

async function rabbitSubject(name: string): Promise<Subject> {
  const source = uniqueName(name);
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(source, { durable: true });
  await deployRabbitApp(kc, services, namespace, name, source);
  return {
    name,
    queues: ['orders'],
    send: async (i, user) => {
      const id = `${source}-${user ?? 'plain'}-${i}`;
      await publishTo(ch, source, [id], user);
      return id;
    },
    attach: (split, sink) => attachRabbit(split.status!.queues![0]!.shadow!.source!, sink),
    appReceived: () => appReceived(source),
    handedBack: () =>
      waitForHandback(kc, {
        kind: 'Deployment',
        namespace,
        name,
        replicas: 1,
        env: [{ container: 'app', name: 'SOURCE_QUEUE', value: source }],
        timeoutMs: 300_000,
      }),
    close: () => ch.close().catch(() => undefined),
  };
}

/** The demo's service: one Kafka topic and one RabbitMQ queue, both engines in one queue-agent. */
async function shopSubject(name: string): Promise<Subject> {
  const ch = await conn.createConfirmChannel();
  const { topic, group, queue } = await deployShop({
    kc,
    kafka,
    ch,
    namespace,
    name,
    prefix: name,
    partitions: 3,
  });
  return {
    name,
    queues: ['orders', 'invoices'],
    send: async (i, user) => {
      // Alternate brokers: each gets plain and developer messages.
      const onKafka = Math.floor(i / 2) % 2 === 0;
      const id = `${onKafka ? topic : queue}-${user ?? 'plain'}-${i}`;
      if (onKafka) await produceIds(producer, topic, [id], user);
      else await publishTo(ch, queue, [id], user);
      return id;
    },
    attach: async (split, sink) => {
      const orders = split.status!.queues!.find((q) => q.name === 'orders')!.shadow!;
      const invoices = split.status!.queues!.find((q) => q.name === 'invoices')!.shadow!;
      const local = await consumeIds(kafka, orders.source!, orders.group!, sink);
      const detachRabbit = await attachRabbit(invoices.source!, sink);
      return async () => {
        await local.disconnect();
        await detachRabbit();
      };
    },
    appReceived: () => new Set([...appReceived(topic), ...appReceived(queue)]),
    handedBack: () =>
      waitForHandback(kc, {
        kind: 'Deployment',
        namespace,
        name,
        replicas: 1,
        env: [
          { container: 'orders-consumer', name: 'SOURCE_TOPIC', value: topic },
          { container: 'orders-consumer', name: 'KAFKA_GROUP', value: group },
          { container: 'invoices-consumer', name: 'SOURCE_QUEUE', value: queue },
        ],
        timeoutMs: 300_000,
      }),
    close: () => ch.close().catch(() => undefined),
  };
}

/** A developer's consumer of a RabbitMQ session shadow; the returned function lets go of it. */
async function attachRabbit(shadow: string, sink: string[]): Promise<() => Promise<void>> {
  const local = await conn.createChannel();
  await local.consume(shadow, (m) => {
    if (!m) return;
    sink.push(String(m.properties.messageId));
    local.ack(m);
  });
  return () => local.close().catch(() => undefined);
}

/** Sends a plain and a developer-header message alternately, every 100 ms, until stopped. */
function traffic(subject: Subject, user: string) {
  const plain: string[] = [];
  const mine: string[] = [];
  let running = true;
  const done = (async () => {
    for (let i = 0; running; i++) {
      if (i % 2) mine.push(await subject.send(i, user));
      else plain.push(await subject.send(i));
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

/** The workloads under test, by the label their names carry. */
const SUBJECTS = { rmq: rabbitSubject, mixed: shopSubject };
type Kind = keyof typeof SUBJECTS;

/** One split's life with a kill at the start of each wanted phase; returns the kills made. */
async function lifecycle(
  target: Target,
  kind: Kind,
  wanted: readonly string[],
  round: number,
): Promise<Kill[]> {
  const user = `ivy${round}`;
  const subject = await SUBJECTS[kind](`crash-${target === 'controller' ? 'ctl' : 'agt'}-${kind}-${round}`);
  const name = subject.name;

  const kills: Kill[] = [];
  const watch = new PhaseWatch(kc, namespace, name, async (phase) => {
    if (!wanted.includes(phase)) return;
    // The target may be starting (a queue-agent in PREPARING) or restarting after the last kill.
    for (let waited = 0; watch.shows(phase) && waited < 30_000; waited += 100) {
      const pid = await livePid(target, name);
      if (pid) {
        process.kill(pid, 'SIGKILL');
        kills.push({ phase, pid, confirmed: watch.shows(phase) });
        return;
      }
      await sleep(100);
    }
  });
  watch.start();
  const flow = traffic(subject, user);
  const mineReceived: string[] = [];
  try {
    const split = await createSplit(kc, namespace, {
      workload: name,
      queues: subject.queues,
      filter: { 'x-queue-split-user': user },
      owner: user,
    });
    const active = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', 300_000);
    const detach = await subject.attach(active, mineReceived);
    // A teammate attaches to the active queue and leaves again (route ATTACHING, DRAINING).
    const mate = await createSplit(kc, namespace, {
      workload: name,
      queues: subject.queues,
      filter: { 'x-queue-split-user': `jay${round}` },
      owner: `jay${round}`,
    });
    await waitForSplitPhase(kc, namespace, mate.metadata.name, 'Active', 300_000);
    await deleteSplit(kc, namespace, mate.metadata.name);
    await waitForSplitGone(kc, namespace, mate.metadata.name, 300_000);
    await sleep(3000); // traffic through the split while ACTIVE
    // As the sidecar does when a split stops: the route drains once its consumer has let go.
    await detach();
    await deleteSplit(kc, namespace, split.metadata.name);
    await waitForSplitGone(kc, namespace, split.metadata.name, 300_000);
    await subject.handedBack();
    await pollUntil(
      'the state document is removed',
      async () => watch.phase,
      (p) => p === '',
      30_000,
    );
    await flow.stop();
    const published = [...flow.plain, ...flow.mine];
    await pollUntil(
      `every one of ${published.length} messages published during the kills was delivered`,
      async () => new Set([...subject.appReceived(), ...mineReceived]),
      (got) => published.every((id) => got.has(id)),
      120_000,
    ).catch((err: unknown) => {
      const got = new Set([...subject.appReceived(), ...mineReceived]);
      const lost = published.filter((id) => !got.has(id));
      throw new Error(`${String(err)}\nnot delivered: ${lost.slice(0, 20).join(', ')}`);
    });
    const strangers = mineReceived.filter((id) => !flow.mine.includes(id));
    assert.deepEqual(strangers, [], `${user}'s consumers received only ${user}'s messages`);
    console.log(
      `${name}: ${published.length} messages (${flow.mine.length} with ${user}'s header, ` +
        `${new Set(mineReceived).size} reached ${user}); kills: ` +
        kills.map((k) => `${k.phase}${k.confirmed ? '' : ' (phase had moved on)'}`).join(', '),
    );
    console.log(`${name} timeline: ${watch.describe()}`);
    return kills;
  } finally {
    watch.stop();
    await flow.stop();
    await subject.close();
  }
}

async function killInEveryPhase(target: Target, kind: Kind): Promise<void> {
  const hit = new Set<string>();
  for (let round = 1; round <= ROUNDS; round++) {
    const missing = EVERY_PHASE.filter((p) => !hit.has(p));
    if (missing.length === 0) break;
    for (const k of await lifecycle(target, kind, missing, round)) if (k.confirmed) hit.add(k.phase);
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
  const log = podLogLines(testInstall.namespace, standby.metadata!.name!, 'controller').join('\n');
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
    await killInEveryPhase('controller', 'rmq');
    const now = await pollUntil('a live leader after the kills', () => controllerLeader(kc), Boolean, 60_000);
    assert.ok(now!.transitions > (first?.transitions ?? 0), 'leadership moved when its holder was killed');
  },
);

// One agent serving a Kafka topic and a RabbitMQ queue: every kill interrupts both engines, so the
// RabbitMQ engine is killed in every phase here too (a RabbitMQ-only agent's lives cost 5 more
// minutes of CI for the same kills; the controller kills above use that subject).
test(
  'queue-agent kill -9 in every phase, one agent with a Kafka topic and a RabbitMQ queue: it restarts, resumes from its checkpoints, and nothing is lost',
  KILL_TEST,
  async () => {
    await killInEveryPhase('queue-agent', 'mixed');
  },
);
