// A single-node Apache Kafka (KRaft, broker+controller) on loopback, run with the machine's
// Java 17 from the official jars on Maven Central. The jars are fetched once by Maven into
// the cache, keyed by the version pinned in kafka/pom.xml.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cacheDir, runDir } from './paths';
import { portOpen, runningPid, startDetached, stop, waitFor } from './processes';

const pom = path.join(__dirname, 'kafka', 'pom.xml');
export const kafkaVersion = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(
  fs.readFileSync(pom, 'utf8'),
)?.[1];
const port = 9092;
const controllerPort = 19093;
const home = path.join(runDir, 'kafka');
const libs = path.join(cacheDir, `kafka-${kafkaVersion}`, 'libs');

function ensureJars(): void {
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

function java(args: string[]): string {
  return execFileSync('java', ['-cp', `${libs}/*`, ...args], { encoding: 'utf8' });
}

function writeConfig(): string {
  const config = path.join(home, 'server.properties');
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(
    config,
    [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
      `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
      'controller.listener.names=CONTROLLER',
      'inter.broker.listener.name=PLAINTEXT',
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      `log.dirs=${path.join(home, 'data')}`,
      'num.partitions=1',
      'offsets.topic.replication.factor=1',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'share.coordinator.state.topic.replication.factor=1',
      'share.coordinator.state.topic.min.isr=1',
      'group.initial.rebalance.delay.ms=0',
      // Tests create the topics they use; a typo must fail rather than make a new topic.
      'auto.create.topics.enable=false',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(home, 'log4j2.properties'),
    [
      'status = warn',
      'appender.file.type = File',
      'appender.file.name = file',
      `appender.file.fileName = ${path.join(home, 'server.log')}`,
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
function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

export async function startKafka(): Promise<Record<string, string>> {
  const env = { KAFKA_BROKERS: `127.0.0.1:${port}`, KAFKA_VERSION: kafkaVersion ?? 'unknown' };
  if (runningPid('kafka') !== undefined && (await portOpen(port))) {
    console.log(`kafka: already running (Apache Kafka ${kafkaVersion}) on ${env.KAFKA_BROKERS}`);
    return env;
  }
  if (await portOpen(port)) {
    throw new Error(
      `kafka: port ${port} is taken by a process this environment did not start; stop it first.`,
    );
  }
  ensureJars();
  const config = writeConfig();
  if (!fs.existsSync(path.join(home, 'data', 'meta.properties'))) {
    java(['kafka.tools.StorageTool', 'format', '-t', newClusterId(), '-c', config, '--ignore-formatted']);
  }
  const proc = startDetached(
    'kafka',
    'java',
    [
      '-Xms256m',
      '-Xmx1g',
      '-XX:+UseG1GC',
      '-Djava.awt.headless=true',
      `-Dlog4j2.configurationFile=${path.join(home, 'log4j2.properties')}`,
      `-Dkafka.logs.dir=${home}`,
      '-cp',
      `${libs}/*`,
      'kafka.Kafka',
      config,
    ],
    { cwd: home },
  );
  const serverLog = path.join(home, 'server.log');
  await waitFor('Kafka', () => brokerStarted(serverLog, port), {
    timeoutMs: 90_000,
    logFile: serverLog,
    pid: proc.pid,
    hint: `Check Java 17 (\`java -version\`), free ports ${port}/${controllerPort}, or run \`npm run env:down\` and remove ${home} to start from empty storage.`,
  });
  const started = /Kafka version: (\S+)/.exec(fs.readFileSync(serverLog, 'utf8'))?.[1];
  console.log(
    `kafka: started Apache Kafka ${started ?? kafkaVersion} (KRaft) on ${env.KAFKA_BROKERS}, pid ${proc.pid}`,
  );
  return env;
}

async function brokerStarted(serverLog: string, brokerPort: number): Promise<boolean> {
  const log = fs.existsSync(serverLog) ? fs.readFileSync(serverLog, 'utf8') : '';
  return /\[KafkaRaftServer nodeId=1\] Kafka Server started/.test(log) && (await portOpen(brokerPort));
}

export const stopKafka = () => stop('kafka', 30_000);
