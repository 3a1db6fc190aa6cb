// kill -9 in every phase (docs/design.md §6 recovery), shared by the controller's and the
// queue-agent's test files: a split's whole life — activation, ACTIVE with a teammate's route
// attaching and draining, handback — runs while the test watches the state document and, the
// moment each phase is persisted, SIGKILLs the process under test. Traffic flows the whole time;
// the fixture app's records and the developer's own consumer prove every message arrived
// somewhere and none of the developer's reached anyone else's consumer while split.
//
// A phase can end before the process is found (a short phase, or the target still restarting):
// that kill is not counted, and another split's life tries again for the phases not yet hit.
import assert from 'node:assert/strict';
import { AppsV1Api } from '@kubernetes/client-node';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { applyEnv, originalEnvEntries } from '../../core/queueConfig/originalEnv';
import { isConflict } from '../../agent/kube/client';
import type { ClusterFixture } from './clusterFixture';
import { deployShop, waitForShopHandback } from './shop';
import { PhaseWatch } from './phaseWatch';
import { pollUntil, sleep } from './poll';
import { controllerLeader, queueAgentPid } from './processes';
import { appReceived, consumeQueueIds, publishTo, rabbitApp, waitForRabbitHandback } from './rabbitSplit';
import { consumeIds, produceIds } from './kafkaSplit';
import { consumeSqsIds, sendSqsIds, sqsClient, sqsQueueUrls } from './sqs';
import { removeSplit, splitFor, waitForSplitPhase } from './splits';

export type Target = 'controller' | 'queue-agent';

/** Up to three split lives with restarts and backoffs: longer than the suite's default timeout. */
export const KILL_TEST = { timeout: 25 * 60_000 };

/**
 * Kills `target` in every phase of up to three split lives of a `kind` workload, in the
 * namespace of a cluster fixture with RabbitMQ and Kafka (test/support/clusterFixture.ts).
 */
export function killInEveryPhase(fx: ClusterFixture, target: Target, kind: 'rmq' | 'mixed'): Promise<void> {
  return killer(fx).killInEveryPhase(target, kind);
}

function killer(fx: ClusterFixture) {
  const { kc, namespace, conn, kafka, producer } = fx;
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
    const ch = await conn.createConfirmChannel();
    const source = await rabbitApp(fx, name);
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
      handedBack: () => waitForRabbitHandback(kc, namespace, name, source, { timeoutMs: 300_000 }),
      close: () => ch.close().catch(() => undefined),
    };
  }

  /** The demo's service: a Kafka topic, a RabbitMQ queue and an SQS queue, three engines in one
   * queue-agent. */
  async function shopSubject(name: string): Promise<Subject> {
    const ch = await conn.createConfirmChannel();
    const sqs = sqsClient();
    const sources = await deployShop(fx, name, 3, { sqs });
    const { topic, queue } = sources;
    const payments = sources.payments!;
    const shadowOf = (split: QueueSplit, queue: string) =>
      split.status!.queues!.find((q) => q.name === queue)!.shadow!;
    return {
      name,
      queues: ['orders', 'invoices', 'payments'],
      send: async (i, user) => {
        // Rotate brokers in pairs: each gets plain and developer messages.
        const broker = Math.floor(i / 2) % 3;
        const id = `${[topic, queue, payments.name][broker]}-${user ?? 'plain'}-${i}`;
        if (broker === 0) await produceIds(producer, topic, [id], user);
        else if (broker === 1) await publishTo(ch, queue, [id], user);
        else await sendSqsIds(sqs, payments.hostUrl, [id], user);
        return id;
      },
      attach: async (split, sink) => {
        const orders = shadowOf(split, 'orders');
        const local = await consumeIds(kafka, orders.source!, orders.group!, sink);
        const detachRabbit = await attachRabbit(shadowOf(split, 'invoices').source!, sink);
        const session = sqsQueueUrls(fx.services.sqs, shadowOf(split, 'payments').source!);
        const detachSqs = consumeSqsIds(sqs, session.hostUrl, sink);
        return async () => {
          await local.disconnect();
          await detachRabbit();
          await detachSqs();
        };
      },
      appReceived: () =>
        new Set([
          ...appReceived(topic),
          ...appReceived(queue),
          // From its shadow during the split, from its queue after: any source of this run's queue.
          ...appReceived(payments.name),
        ]),
      handedBack: () => waitForShopHandback(kc, namespace, name, sources, { timeoutMs: 300_000 }),
      close: async () => {
        await ch.close().catch(() => undefined);
        sqs.destroy();
      },
    };
  }

  /** A developer's consumer of a RabbitMQ session shadow; the returned function lets go of it. */
  async function attachRabbit(shadow: string, sink: string[]): Promise<() => Promise<void>> {
    const local = await consumeQueueIds(conn, shadow, sink);
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

  /**
   * Puts the workload's env back to its original values, as if the controller had been killed
   * just before it wrote the redirect's overrides (or a GitOps sync undid them while no controller
   * ran): the successor's recovery must write them again and carry on, not call it a revert.
   */
  async function putEnvBack(workload: string): Promise<void> {
    const apps = kc.makeApiClient(AppsV1Api);
    for (;;) {
      const d = await apps.readNamespacedDeployment({ name: workload, namespace });
      applyEnv(d, originalEnvEntries(d));
      try {
        await apps.replaceNamespacedDeployment({ name: workload, namespace, body: d });
        return;
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
    }
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
          // The kill may land before or after the overrides' write: make it "before", every time.
          if (target === 'controller' && phase === 'REDIRECTING_APP') await putEnvBack(name);
          return;
        }
        await sleep(100);
      }
    });
    watch.start();
    const flow = traffic(subject, user);
    const mineReceived: string[] = [];
    try {
      const split = await splitFor(kc, namespace, { workload: name, queues: subject.queues, user });
      const active = await waitForSplitPhase(kc, namespace, split.metadata.name, 'Active', 300_000);
      const detach = await subject.attach(active, mineReceived);
      // A teammate attaches to the active queue and leaves again (route ATTACHING, DRAINING).
      const mate = await splitFor(kc, namespace, {
        workload: name,
        queues: subject.queues,
        user: `jay${round}`,
      });
      await waitForSplitPhase(kc, namespace, mate.metadata.name, 'Active', 300_000);
      await removeSplit(kc, namespace, mate.metadata.name, 300_000);
      await sleep(3000); // traffic through the split while ACTIVE
      // As the sidecar does when a split stops: the route drains once its consumer has let go.
      await detach();
      await removeSplit(kc, namespace, split.metadata.name, 300_000);
      await subject.handedBack();
      await watch.untilRemoved(30_000);
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
        throw new Error(
          `${String(err)}\nnot delivered: ${lost.slice(0, 20).join(', ')}\n${name} timeline: ${watch.describe()}`,
        );
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
  return { killInEveryPhase };
}
