// Apache Kafka (KRaft) on loopback, run with the machine's Java 17 from the official jars on
// Maven Central. The jars are fetched once by Maven into the cache, keyed by the version pinned
// in kafka/pom.xml. `startKafka` is the environment's single node (broker+controller on 9092);
// test/env/kafka/cluster.ts starts private multi-broker clusters from the same pieces.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { brokerTlsDir, ensureBrokerTls } from './brokerTls';
import { podGateway, gatewayPorts } from './k8s/node/podNetwork';
import { cacheDir, runDir } from './paths';
import { portOpen, runningPid, startDetached, stop, waitFor, type ManagedProcess } from './processes';

const pom = path.join(__dirname, 'kafka', 'pom.xml');
export const kafkaVersion = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(
  fs.readFileSync(pom, 'utf8'),
)?.[1];
const port = 9092;
const controllerPort = 19093;
const home = path.join(runDir, 'kafka');
/** The Kafka jars (broker and clients); the foreign Java producer of the suites uses them too. */
export const kafkaLibs = path.join(cacheDir, `kafka-${kafkaVersion}`, 'libs');
const libs = kafkaLibs;
/** Kafka's tools jar and what it needs beyond `kafkaLibs` (run with both on the classpath). */
export const kafkaToolsLibs = path.join(cacheDir, `kafka-tools-${kafkaVersion}`, 'libs');

export function ensureJars(): void {
  if (fs.existsSync(path.join(libs, `kafka_2.13-${kafkaVersion}.jar`))) return;
  console.log(`kafka: fetching Apache Kafka ${kafkaVersion} jars from Maven Central (once)...`);
  const tmp = `${libs}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  execFileSync(
    'mvn',
    [
      '-q',
      '-B',
      '-f',
      pom,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${tmp}`,
    ],
    { stdio: 'inherit' },
  );
  fs.rmSync(libs, { recursive: true, force: true });
  fs.renameSync(tmp, libs); // atomic: an interrupted fetch never leaves a half cache
}

/** Kafka's own `ProducerPerformance`/`ConsumerPerformance`, the Java ceiling the Kafka engine
 * bench prints beside the engine (test/bench/kafka-engine.bench.ts). Fetched once per version,
 * in a cache of its own: the broker runs from `kafkaLibs`, which is never rewritten under it. */
export function ensureToolJars(): void {
  const jar = `kafka-tools-${kafkaVersion}.jar`;
  if (fs.existsSync(path.join(kafkaToolsLibs, jar))) return;
  ensureJars();
  console.log(`kafka: fetching kafka-tools ${kafkaVersion} from Maven Central (once)...`);
  const tmp = `${kafkaToolsLibs}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  execFileSync(
    'mvn',
    [
      '-q',
      '-B',
      '-f',
      path.join(__dirname, 'kafka', 'tools-pom.xml'),
      `-Dkafka.version=${kafkaVersion}`,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${tmp}`,
    ],
    { stdio: 'inherit' },
  );
  // One artifact twice on a classpath (say log4j 2.24 and 2.25) is one too many: keep only the
  // artifacts the broker's libs lack, so the broker's versions win.
  const artifact = (jar: string) => jar.replace(/-\d[^-]*(-[^-]*)?\.jar$/, '');
  const broker = new Set(fs.readdirSync(libs).map(artifact));
  for (const f of fs.readdirSync(tmp)) if (broker.has(artifact(f))) fs.rmSync(path.join(tmp, f));
  if (!fs.existsSync(path.join(tmp, jar))) throw new Error(`kafka: ${jar} was not fetched`);
  fs.rmSync(kafkaToolsLibs, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(kafkaToolsLibs), { recursive: true });
  fs.renameSync(tmp, kafkaToolsLibs); // atomic, as ensureJars
}

function java(args: string[]): string {
  return execFileSync('java', ['-cp', `${libs}/*`, ...args], { encoding: 'utf8' });
}

/** One KRaft node: a broker, and a controller too when it has a controller port. */
export interface KafkaNode {
  readonly nodeId: number;
  /** Where its config, data and server.log live. */
  readonly home: string;
  readonly port: number;
  /** Set on controller nodes (process.roles=broker,controller). */
  readonly controllerPort?: number;
  /** `id@host:port` of every controller of the cluster. */
  readonly voters: string;
  /** Replication of the internal topics (offsets, transactions, share state). */
  readonly internalReplication: number;
  /** min.insync of the transaction log (Kafka's default is 2; a single node needs 1). */
  readonly transactionMinIsr: number;
  /** The address its client listeners bind (default 127.0.0.1; 0.0.0.0 in a container whose
   * ports the engine publishes on the host's loopback: test/env/containers/brokers.ts). */
  readonly bindHost?: string;
  /** Extra server.properties lines (`key=value`). */
  readonly extra?: readonly string[];
  /** A second listener on loopback `port`, advertised as `advertised` (host:port). */
  readonly podListener?: { readonly port: number; readonly advertised: string };
  /** The same over TLS, with this unencrypted PKCS#8 key and certificate (PEM files). */
  readonly tlsListener?: {
    readonly port: number;
    readonly advertised: string;
    readonly keyFile: string;
    readonly certFile: string;
  };
}

export const serverLogOf = (node: KafkaNode) => path.join(node.home, 'server.log');

const pemProperty = (file: string) => fs.readFileSync(file, 'utf8').trim().split('\n').join('\\n');

/** Writes the node's server.properties and log4j2.properties into its home; returns the former.
 * The container backend (test/env/containers/) mounts that home at the same path. */
export function writeConfig(node: KafkaNode): string {
  const config = path.join(node.home, 'server.properties');
  fs.mkdirSync(node.home, { recursive: true });
  const controller = node.controllerPort !== undefined;
  const bind = node.bindHost ?? '127.0.0.1';
  const listeners = [`PLAINTEXT://${bind}:${node.port}`];
  const advertised = [`PLAINTEXT://127.0.0.1:${node.port}`];
  if (node.podListener) {
    listeners.push(`POD://${bind}:${node.podListener.port}`);
    advertised.push(`POD://${node.podListener.advertised}`);
  }
  if (node.tlsListener) {
    listeners.push(`POD_TLS://${bind}:${node.tlsListener.port}`);
    advertised.push(`POD_TLS://${node.tlsListener.advertised}`);
  }
  if (controller) listeners.push(`CONTROLLER://127.0.0.1:${node.controllerPort}`);
  fs.writeFileSync(
    config,
    [
      `process.roles=${controller ? 'broker,controller' : 'broker'}`,
      `node.id=${node.nodeId}`,
      `controller.quorum.voters=${node.voters}`,
      `listeners=${listeners.join(',')}`,
      `advertised.listeners=${advertised.join(',')}`,
      'controller.listener.names=CONTROLLER',
      'inter.broker.listener.name=PLAINTEXT',
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,POD:PLAINTEXT,POD_TLS:SSL,CONTROLLER:PLAINTEXT',
      ...(node.tlsListener
        ? [
            // Inline PEM: a PEM keystore *file* needs an encrypted key (Kafka's
            // DefaultSslEngineFactory), inline values may be unencrypted. "\n" is a properties escape.
            'listener.name.pod_tls.ssl.keystore.type=PEM',
            `listener.name.pod_tls.ssl.keystore.key=${pemProperty(node.tlsListener.keyFile)}`,
            `listener.name.pod_tls.ssl.keystore.certificate.chain=${pemProperty(node.tlsListener.certFile)}`,
          ]
        : []),
      `log.dirs=${path.join(node.home, 'data')}`,
      'num.partitions=1',
      `offsets.topic.replication.factor=${node.internalReplication}`,
      `transaction.state.log.replication.factor=${node.internalReplication}`,
      `transaction.state.log.min.isr=${node.transactionMinIsr}`,
      `share.coordinator.state.topic.replication.factor=${node.internalReplication}`,
      `share.coordinator.state.topic.min.isr=${node.transactionMinIsr}`,
      'group.initial.rebalance.delay.ms=0',
      // Tests create the topics they use; a typo must fail rather than make a new topic.
      'auto.create.topics.enable=false',
      ...(node.extra ?? []),
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(node.home, 'log4j2.properties'),
    [
      'status = warn',
      'appender.file.type = File',
      'appender.file.name = file',
      `appender.file.fileName = ${serverLogOf(node)}`,
      'appender.file.layout.type = PatternLayout',
      'appender.file.layout.pattern = [%d] %p %m (%c)%n',
      'rootLogger.level = INFO',
      'rootLogger.appenderRef.file.ref = file',
      'logger.kafka.name = kafka',
      'logger.kafka.level = INFO',
      'logger.state.name = state.change.logger',
      'logger.state.level = WARN',
      '',
    ].join('\n'),
  );
  return config;
}

/** Kafka's cluster ids are 16 random bytes in URL-safe base64 without padding. */
/** A base64url id, never starting with '-': kafka-storage would read that as an option (Kafka's
 * own Uuid.randomUuid regenerates such ids for the same reason). */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** Writes the node's config, formats its storage once (with `clusterId`) and starts its JVM as
 * the managed process `name`. */
export function launchKafkaNode(
  name: string,
  node: KafkaNode,
  clusterId: string,
  heap: { min: string; max: string },
): ManagedProcess {
  ensureJars();
  const config = writeConfig(node);
  if (!fs.existsSync(path.join(node.home, 'data', 'meta.properties'))) {
    java(['kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', config, '--ignore-formatted']);
  }
  return startDetached(
    name,
    'java',
    [
      `-Xms${heap.min}`,
      `-Xmx${heap.max}`,
      '-XX:+UseG1GC',
      '-Djava.awt.headless=true',
      `-Dlog4j2.configurationFile=${path.join(node.home, 'log4j2.properties')}`,
      `-Dkafka.logs.dir=${node.home}`,
      '-cp',
      `${libs}/*`,
      'kafka.Kafka',
      config,
    ],
    { cwd: node.home },
  );
}

/** Waits for the node's "Kafka Server started" after `logOffset` (its log grows over restarts). */
export async function awaitKafkaNode(
  node: KafkaNode,
  proc: ManagedProcess,
  options: { timeoutMs: number; hint: string; logOffset?: number },
): Promise<void> {
  const serverLog = serverLogOf(node);
  const started = new RegExp(`\\[KafkaRaftServer nodeId=${node.nodeId}\\] Kafka Server started`);
  await waitFor(
    `Kafka node ${node.nodeId}`,
    async () => {
      const log = fs.existsSync(serverLog) ? fs.readFileSync(serverLog, 'utf8') : '';
      return started.test(log.slice(options.logOffset ?? 0)) && (await portOpen(node.port));
    },
    { timeoutMs: options.timeoutMs, logFile: serverLog, pid: proc.pid, hint: options.hint },
  );
}

/** The environment's single node, whichever backend runs it. */
export const envNode: KafkaNode = {
  nodeId: 1,
  home,
  port,
  controllerPort,
  voters: `1@127.0.0.1:${controllerPort}`,
  internalReplication: 1,
  transactionMinIsr: 1,
  // Pods on the real node reach the broker through the bridge (test/env/k8s/node/podNetwork.ts).
  podListener: { port: gatewayPorts.kafka, advertised: `${podGateway}:${gatewayPorts.kafka}` },
  // And over TLS, signed by the test CA (test/env/brokerTls.ts), for workloads that declare it.
  tlsListener: {
    port: gatewayPorts.kafkaTls,
    advertised: `${podGateway}:${gatewayPorts.kafkaTls}`,
    keyFile: path.join(brokerTlsDir, 'server.key'),
    certFile: path.join(brokerTlsDir, 'server.crt'),
  },
};

/** What the environment's Kafka adds to test.env, whichever backend runs it. */
export function kafkaEnv(): Record<string, string> {
  return {
    KAFKA_BROKERS: `127.0.0.1:${port}`,
    KAFKA_POD_BROKERS: envNode.podListener!.advertised,
    KAFKA_POD_TLS_BROKERS: envNode.tlsListener!.advertised,
    KAFKA_VERSION: kafkaVersion ?? 'unknown',
  };
}

/** The ports the environment's node listens on (all on loopback). */
export const kafkaPorts = [port, controllerPort, gatewayPorts.kafka, gatewayPorts.kafkaTls] as const;

export async function startKafka(): Promise<Record<string, string>> {
  const env = kafkaEnv();
  ensureToolJars(); // before the running check: an environment started before the tools were added gets them too
  if (runningPid('kafka') !== undefined && (await portOpen(port))) {
    if ((await portOpen(gatewayPorts.kafka)) && (await portOpen(gatewayPorts.kafkaTls))) {
      console.log(`kafka: already running (Apache Kafka ${kafkaVersion}) on ${env.KAFKA_BROKERS}`);
      return env;
    }
    console.log('kafka: running without the pod listeners (an older env:up): restarting it');
    await stop('kafka', 30_000);
  }
  if (await portOpen(port)) {
    throw new Error(
      `kafka: port ${port} is taken by a process this environment did not start; stop it first.`,
    );
  }
  ensureBrokerTls();
  const proc = launchKafkaNode('kafka', envNode, newClusterId(), { min: '256m', max: '1g' });
  await awaitKafkaNode(envNode, proc, {
    timeoutMs: 90_000,
    hint: `Check Java 17 (\`java -version\`), free ports ${port}/${controllerPort}, or run \`npm run env:down\` and remove ${home} to start from empty storage.`,
  });
  const serverLog = serverLogOf(envNode);
  const started = /Kafka version: (\S+)/.exec(fs.readFileSync(serverLog, 'utf8'))?.[1];
  console.log(
    `kafka: started Apache Kafka ${started ?? kafkaVersion} (KRaft) on ${env.KAFKA_BROKERS}, pid ${proc.pid}`,
  );
  return env;
}

export const stopKafka = () => stop('kafka', 30_000);
