// A private N-broker KRaft cluster for the suites that need replication (shadows as durable as a
// replicated source, a broker outage during a split: docs/design.md §5): local JVMs from the same
// jars as the environment's broker (test/env/kafka.ts), on free loopback ports, with their data
// under the run dir. Never the shared broker on 9092.
//
// Topology: node 1 is broker+controller (the only voter), the others are brokers. One voter is
// the lightest real KRaft quorum, and it keeps the metadata layer up while brokers 2..N stop, so
// a test sees what brokers do (ISR shrinking, NOT_ENOUGH_REPLICAS below min.insync.replicas)
// rather than a lost quorum. Stop only brokers 2..N; node 1 is the cluster's controller.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { awaitKafkaNode, launchKafkaNode, newClusterId, serverLogOf, type KafkaNode } from '../kafka';
import { runDir } from '../paths';
import { runningPid, stop, type ManagedProcess } from '../processes';
import { freePort } from '../../support/freePort';

export interface KafkaClusterOptions {
  /** Unique per run: names the data dir and the managed processes. */
  readonly label: string;
  /** Number of nodes (brokers), at least 1. */
  readonly nodes: number;
  /** JVM heap ceiling per node (small: several JVMs share two cores in CI). */
  readonly heapMax?: string;
}

export interface KafkaCluster {
  /** Bootstrap addresses of every node. */
  readonly brokers: readonly string[];
  readonly nodeIds: readonly number[];
  /** The node's broker address. */
  addressOf(nodeId: number): string;
  /** Stops a broker (SIGTERM: a controlled shutdown moves its leaderships first). */
  stopNode(nodeId: number): Promise<void>;
  /** Starts a stopped broker again on its data and waits until the cluster lists it. */
  startNode(nodeId: number): Promise<void>;
  /** Stops every node and deletes the cluster's data (its logs too, unless QS_KEEP_KAFKA_CLUSTER=1). */
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 120_000; // cold JVMs on a loaded 2-core CI machine

export async function startKafkaCluster(options: KafkaClusterOptions): Promise<KafkaCluster> {
  if (!Number.isInteger(options.nodes) || options.nodes < 1)
    throw new Error(`startKafkaCluster: nodes must be a positive integer, got ${options.nodes}`);
  if (!/^[a-z0-9-]+$/.test(options.label))
    throw new Error(
      `startKafkaCluster: label must be lowercase letters, digits and '-', got ${options.label}`,
    );
  const dir = path.join(runDir, 'kafka-clusters', options.label);
  const heap = { min: '128m', max: options.heapMax ?? '384m' };
  const ports: number[] = [];
  while (ports.length < options.nodes + 1) {
    const p = await freePort();
    if (!ports.includes(p)) ports.push(p);
  }
  const controllerPort = ports[options.nodes]!;
  const internalReplication = Math.min(3, options.nodes);
  const nodes: KafkaNode[] = Array.from({ length: options.nodes }, (_, i) => ({
    nodeId: i + 1,
    home: path.join(dir, `node-${i + 1}`),
    port: ports[i]!,
    ...(i === 0 ? { controllerPort } : {}),
    voters: `1@127.0.0.1:${controllerPort}`,
    internalReplication,
    transactionMinIsr: Math.min(2, internalReplication),
    extra: [
      // Fewer internal partitions than Kafka's 50 each: the same protocol, a fraction of the
      // replicas to start and to move when a broker stops.
      'offsets.topic.num.partitions=5',
      'transaction.state.log.num.partitions=5',
      // A stopped broker is fenced sooner than Kafka's 9 s, so leaders move while a test waits.
      'broker.session.timeout.ms=6000',
      'broker.heartbeat.interval.ms=1000',
    ],
  }));
  const clusterId = newClusterId();
  const nameOf = (id: number) => `kafka-cluster-${options.label}-${id}`;
  const node = (id: number): KafkaNode => {
    const n = nodes.find((x) => x.nodeId === id);
    if (!n) throw new Error(`the cluster ${options.label} has no node ${id} (nodes 1..${nodes.length})`);
    return n;
  };
  const brokers = nodes.map((n) => `127.0.0.1:${n.port}`);
  const hint = `Check Java 17 (\`java -version\`) and the node's log under ${dir}.`;

  // A test process that ends without close() (an uncaught error, --test-force-exit) must not
  // leave JVMs behind: the exit hook kills the recorded process groups synchronously.
  const killAll = () => {
    for (const n of nodes) {
      const pid = runningPid(nameOf(n.nodeId));
      if (pid === undefined) continue;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  };
  process.once('exit', killAll);

  /** Until the cluster's metadata lists every broker of `ids` (a started JVM registers, and is
   * unfenced, a moment after its "started" line). */
  const registered = async (ids: readonly number[]) => {
    const kafka = new Kafka({
      clientId: 'qs-cluster-starter',
      brokers: [...brokers],
      logLevel: logLevel.NOTHING,
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const admin = kafka.admin();
      const listed = await admin
        .connect()
        .then(() => admin.describeCluster())
        .then((c) => c.brokers.map((b) => b.nodeId))
        .catch((): number[] => [])
        .finally(() => admin.disconnect().catch(() => undefined));
      if (ids.every((id) => listed.includes(id))) return;
      if (Date.now() > deadline)
        throw new Error(
          `the cluster ${options.label} lists brokers [${listed.join(', ')}], not all of [${ids.join(', ')}], after ${START_TIMEOUT_MS / 1000}s. ${hint}`,
        );
      await sleep(500);
    }
  };

  const launch = async (n: KafkaNode) => {
    const log = serverLogOf(n);
    const logOffset = fs.existsSync(log) ? fs.statSync(log).size : 0;
    const proc: ManagedProcess = launchKafkaNode(nameOf(n.nodeId), n, clusterId, heap);
    await awaitKafkaNode(n, proc, { timeoutMs: START_TIMEOUT_MS, hint, logOffset });
  };
  const up = new Set<number>();
  const close = async () => {
    await Promise.all(nodes.map((n) => stop(nameOf(n.nodeId), 30_000)));
    process.removeListener('exit', killAll);
    if (process.env.QS_KEEP_KAFKA_CLUSTER !== '1') fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    await Promise.all(nodes.map(launch));
    for (const n of nodes) up.add(n.nodeId);
    await registered(nodes.map((n) => n.nodeId));
  } catch (err) {
    await close();
    throw err;
  }

  return {
    brokers,
    nodeIds: nodes.map((n) => n.nodeId),
    addressOf: (id) => `127.0.0.1:${node(id).port}`,
    async stopNode(id) {
      if (id === 1) throw new Error('node 1 is the cluster’s only controller: stop a broker (2..N)');
      node(id);
      await stop(nameOf(id), 30_000);
      up.delete(id);
    },
    async startNode(id) {
      if (up.has(id)) return;
      await launch(node(id));
      up.add(id);
      await registered([id]);
    },
    close,
  };
}
