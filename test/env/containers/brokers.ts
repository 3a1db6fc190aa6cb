// The container backend of the brokers (`npm run env:up -- --brokers --containers`): Kafka (KRaft),
// RabbitMQ with its management plugin and ElasticMQ as containers started through testcontainers,
// from the official images at the process backend's versions (./images.ts), with the same
// configuration files, the same listeners and the same test.env as the process backend.
//
// Networking keeps every listener of the process backend at the same address on the host's
// loopback (Kafka's advertised addresses included: a client that bootstraps on 127.0.0.1:9092 is
// sent to whatever the broker advertises, so a randomly mapped port would not do), so test.env,
// the pod-side gateway addresses (node.sh forwards them to loopback) and every suite stay unchanged:
// - `host` (Linux: this project's podman, Docker on Linux): the containers share the host's
//   network and bind 127.0.0.1 exactly as the processes do; nothing is published.
// - `ports` (Docker Desktop, podman machine: their containers run in a VM, whose "host" network is
//   not the laptop's loopback): a bridge network, the brokers bind 0.0.0.0 inside their container
//   and the engine publishes each listener at the same port on the laptop's 127.0.0.1 only.
// QS_CONTAINER_NETWORK=host|ports chooses instead of the platform.
//
// Each broker's home under the run directory is mounted at the same path inside its container,
// so the paths in the configuration files (log.dirs, TLS files, logs) mean the same on both sides
// and the suites that read the broker's files (test/conformance/kafka/logSegments.ts) read them
// as before. The containers run as the calling user, so what they write is the user's.
//
// The containers outlive env:up (testcontainers' Ryuk is off: ./engine.ts) and env:down stops them
// by the ids recorded here, never by name.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GenericContainer as GenericContainerType } from 'testcontainers';
import { brokerTlsDir, ensureBrokerTls } from '../brokerTls';
import {
  answers as elasticMqAnswers,
  elasticMqEnv,
  elasticMqPort,
  elasticMqVersion,
  writeConfig as writeElasticMqConfig,
} from '../elasticmq';
import {
  ensureToolJars,
  envNode,
  kafkaEnv,
  kafkaPorts,
  kafkaVersion,
  newClusterId,
  serverLogOf,
  writeConfig as writeKafkaConfig,
} from '../kafka';
import { runDir } from '../paths';
import { portOpen, waitFor } from '../processes';
import {
  nodeName,
  overview as rabbitOverview,
  rabbitHome,
  rabbitMqEnv,
  rabbitNodeEnv,
  rabbitPorts,
  writeConfig as writeRabbitConfig,
} from '../rabbitmq';
import { podmanSocket, podmanUlimits } from './engine';
import { brokerImages } from './images';

type Broker = 'kafka' | 'rabbitmq' | 'elasticmq';
type NetworkMode = 'host' | 'ports';

export function networkMode(): NetworkMode {
  const forced = process.env.QS_CONTAINER_NETWORK;
  if (forced === 'host' || forced === 'ports') return forced;
  if (forced !== undefined && forced !== '')
    throw new Error(
      `QS_CONTAINER_NETWORK must be "host" (Linux) or "ports" (Docker Desktop, podman machine), got "${forced}"`,
    );
  return process.platform === 'linux' ? 'host' : 'ports';
}

/** Where a broker's listeners bind inside its container. */
const bindHost = () => (networkMode() === 'host' ? '127.0.0.1' : '0.0.0.0');

const idFile = (broker: Broker) => path.join(runDir, 'containers', `${broker}.id`);
const LABEL_ENV = 'dev.queuesplit.env-dir';
const LABEL_SERVICE = 'dev.queuesplit.service';

async function testcontainers() {
  return import('testcontainers');
}

/** The calling user, whom the containers run as (files they write in the mounted homes are theirs). */
function user(): string {
  const uid = process.getuid?.() ?? 1000;
  const gid = process.getgid?.() ?? 1000;
  return `${uid}:${gid}`;
}

/** The id of the broker's container if it is running. */
async function runningContainer(broker: Broker): Promise<string | undefined> {
  if (!fs.existsSync(idFile(broker))) return undefined;
  const id = fs.readFileSync(idFile(broker), 'utf8').trim();
  const { getContainerRuntimeClient } = await testcontainers();
  const client = await getContainerRuntimeClient();
  try {
    const info = await client.container.inspect(client.container.getById(id));
    return info.State.Running ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The container's last lines of output, or why not within 10 s (a logs request the engine
 * never answers must not hang the error it explains). */
async function containerLogs(id: string): Promise<string> {
  const timeout = new Promise<string>((resolve) => {
    setTimeout(() => resolve('(no logs within 10 s)'), 10_000);
  });
  return Promise.race([readLogs(id), timeout]);
}

async function readLogs(id: string): Promise<string> {
  const { getContainerRuntimeClient } = await testcontainers();
  const client = await getContainerRuntimeClient();
  try {
    const stream = await client.container.logs(client.container.getById(id), {
      follow: false,
      stdout: true,
      stderr: true,
      tail: 40,
    } as never);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
    return Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    return `(no logs: ${err instanceof Error ? err.message : String(err)})`;
  }
}

/** Containers of this run directory's broker that are not running (a start that failed, a stop
 * that did not remove): found by our labels, removed, so that the name is free again. */
async function removeLeftovers(broker: Broker): Promise<void> {
  const { getContainerRuntimeClient } = await testcontainers();
  const client = await getContainerRuntimeClient();
  const leftovers = await client.container.dockerode.listContainers({
    all: true,
    filters: { label: [`${LABEL_ENV}=${runDir}`, `${LABEL_SERVICE}=${broker}`] },
  });
  for (const c of leftovers) await client.container.getById(c.Id).remove({ force: true, v: true });
}

/** Refuses to start over a port someone else holds: the process backend in this or another
 * checkout, or anything else. */
async function assertPortsFree(broker: Broker, ports: readonly number[]): Promise<void> {
  const taken: number[] = [];
  for (const p of ports) if (await portOpen(p)) taken.push(p);
  if (taken.length > 0)
    throw new Error(
      `${broker}: port${taken.length > 1 ? 's' : ''} ${taken.join(', ')} on 127.0.0.1 ${taken.length > 1 ? 'are' : 'is'} taken ` +
        '(the process backend of this or another checkout? `npm run env:down` there); the container backend uses the same ports.',
    );
}

/** Starts the container (networked as `networkMode()`, publishing `ports` in `ports` mode, as the
 * calling user, labelled) and records its id. */
async function start(
  broker: Broker,
  ports: readonly number[],
  configure: (c: GenericContainerType) => GenericContainerType,
): Promise<string> {
  const { GenericContainer } = await testcontainers();
  /** Publishes each port at the same number, on the host's loopback only (testcontainers'
   * withExposedPorts would publish on every interface: guest/guest on the laptop's LAN). */
  class BrokerContainer extends GenericContainer {
    withLoopbackPorts(published: readonly number[]): this {
      this.withExposedPorts(...published.map((p) => ({ container: p, host: p })));
      for (const p of published)
        this.hostConfig.PortBindings = {
          ...this.hostConfig.PortBindings,
          [`${p}/tcp`]: [{ HostIp: '127.0.0.1', HostPort: String(p) }],
        };
      return this;
    }
  }
  const image = brokerImages[broker];
  await removeLeftovers(broker);
  const base = new BrokerContainer(image)
    .withUlimits(process.env.DOCKER_HOST === `unix://${podmanSocket}` ? podmanUlimits() : {})
    .withUser(user())
    .withLabels({ [LABEL_ENV]: runDir, [LABEL_SERVICE]: broker })
    .withStartupTimeout(120_000);
  const container = configure(
    networkMode() === 'host' ? base.withNetworkMode('host') : base.withLoopbackPorts(ports),
  );
  let started;
  try {
    started = await container.start();
  } catch (err) {
    throw new Error(
      `${broker}: the container of ${image} did not start: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  fs.mkdirSync(path.dirname(idFile(broker)), { recursive: true });
  fs.writeFileSync(idFile(broker), `${started.getId()}\n`);
  return started.getId();
}

const hintFor = (id: string) =>
  `The container's output: \`docker logs ${id.slice(0, 12)}\` (or podman). Free the ports, or \`npm run env:down\` and remove ${runDir}.`;

export async function startKafkaContainer(): Promise<Record<string, string>> {
  const env = kafkaEnv();
  ensureToolJars(); // the suites' foreign Java clients run on the host from these jars
  if ((await runningContainer('kafka')) !== undefined && (await portOpen(kafkaPorts[0]))) {
    console.log(`kafka: already running in a container (${brokerImages.kafka}) on ${env.KAFKA_BROKERS}`);
    return env;
  }
  await assertPortsFree('kafka', kafkaPorts);
  ensureBrokerTls();
  const node = { ...envNode, bindHost: bindHost() };
  const config = writeKafkaConfig(node);
  const logOffset = fs.existsSync(serverLogOf(envNode)) ? fs.statSync(serverLogOf(envNode)).size : 0;
  const cp = '/opt/kafka/libs/*';
  // Formats the storage only when it is not yet, as the process backend does.
  const formatted = fs.existsSync(path.join(envNode.home, 'data', 'meta.properties'));
  const script = [
    ...(formatted
      ? []
      : [
          `java -cp '${cp}' kafka.tools.StorageTool format -t ${newClusterId()} -c '${config}' --ignore-formatted`,
        ]),
    `exec java -Xms256m -Xmx1g -XX:+UseG1GC -Djava.awt.headless=true '-Dlog4j2.configurationFile=${path.join(envNode.home, 'log4j2.properties')}' '-Dkafka.logs.dir=${envNode.home}' -cp '${cp}' kafka.Kafka '${config}'`,
  ].join(' && ');
  // The controller's port stays inside the container; clients use the other three.
  const published = kafkaPorts.filter((p) => p !== envNode.controllerPort);
  const id = await start('kafka', published, (c) =>
    c
      .withName(`queuesplit-kafka-${nameSuffix()}`)
      .withBindMounts([{ source: envNode.home, target: envNode.home, mode: 'rw' }])
      .withWorkingDir(envNode.home)
      .withEntrypoint(['sh', '-c', script]),
  );
  const serverLog = serverLogOf(envNode);
  const started = new RegExp(`\\[KafkaRaftServer nodeId=${envNode.nodeId}\\] Kafka Server started`);
  await waitFor(
    'Kafka',
    async () => {
      const log = fs.existsSync(serverLog) ? fs.readFileSync(serverLog, 'utf8').slice(logOffset) : '';
      return started.test(log) && (await portOpen(envNode.port));
    },
    { timeoutMs: 120_000, logFile: serverLog, hint: hintFor(id) },
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}\n--- container output ---\n${await containerLogs(id)}`);
  });
  console.log(
    `kafka: started Apache Kafka ${kafkaVersion} (KRaft) in a container (${brokerImages.kafka}, ${id.slice(0, 12)}) on ${env.KAFKA_BROKERS}`,
  );
  return env;
}

export async function startRabbitMqContainer(): Promise<Record<string, string>> {
  const env = rabbitMqEnv();
  if ((await runningContainer('rabbitmq')) !== undefined && (await portOpen(rabbitPorts[0]))) {
    console.log(`rabbitmq: already running in a container (${brokerImages.rabbitmq})`);
    return env;
  }
  await assertPortsFree('rabbitmq', rabbitPorts);
  writeRabbitConfig(bindHost());
  fs.mkdirSync(path.join(rabbitHome, 'home'), { recursive: true });
  fs.mkdirSync(path.join(rabbitHome, 'conf.d'), { recursive: true });
  const id = await start('rabbitmq', rabbitPorts, (c) =>
    c
      .withName(`queuesplit-rabbitmq-${nameSuffix()}`)
      .withBindMounts([
        { source: rabbitHome, target: rabbitHome, mode: 'rw' },
        { source: brokerTlsDir, target: brokerTlsDir, mode: 'ro' },
      ])
      // The node's own settings, as the process backend's (its epmd is started by the node, inside
      // the container); HOME keeps the Erlang cookie in the mounted home, writable by the user.
      .withEnvironment({
        ...rabbitNodeEnv(),
        RABBITMQ_NODE_IP_ADDRESS: bindHost(),
        // The official image's /etc/rabbitmq/conf.d (its listeners on every interface, guest
        // not limited to loopback) would be read after our file: an empty directory instead.
        RABBITMQ_CONFIG_FILES: path.join(rabbitHome, 'conf.d'),
        HOME: path.join(rabbitHome, 'home'),
      })
      // rabbitmq-server itself: the official image's entrypoint would switch to its own user, who
      // could not read the mounted files.
      .withEntrypoint(['rabbitmq-server'])
      .withCommand([]),
  );
  const logFile = path.join(rabbitHome, 'log', `${nodeName}.log`);
  await waitFor(
    'RabbitMQ',
    async () => (await portOpen(rabbitPorts[0])) && (await rabbitOverview()) !== undefined,
    {
      timeoutMs: 120_000,
      logFile,
      hint: hintFor(id),
    },
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}\n--- container output ---\n${await containerLogs(id)}`);
  });
  const info = await rabbitOverview();
  console.log(
    `rabbitmq: started RabbitMQ ${info?.rabbitmq_version} (${info?.erlang_version?.split(' [')[0]}) in a container ` +
      `(${brokerImages.rabbitmq}, ${id.slice(0, 12)}) AMQP 127.0.0.1:${rabbitPorts[0]}, management 127.0.0.1:${rabbitPorts[1]}`,
  );
  return env;
}

export async function startElasticMqContainer(): Promise<Record<string, string>> {
  const env = elasticMqEnv();
  if ((await runningContainer('elasticmq')) !== undefined && (await portOpen(elasticMqPort))) {
    console.log(`elasticmq: already running in a container (${brokerImages.elasticmq}) on ${elasticMqPort}`);
    return env;
  }
  await assertPortsFree('elasticmq', [elasticMqPort]);
  const config = writeElasticMqConfig(bindHost());
  // The official images (and ours) read /opt/elasticmq.conf (ElasticMQ's README, "Docker").
  const id = await start('elasticmq', [elasticMqPort], (c) =>
    c
      .withName(`queuesplit-elasticmq-${nameSuffix()}`)
      .withBindMounts([{ source: config, target: '/opt/elasticmq.conf', mode: 'ro' }]),
  );
  await waitFor('ElasticMQ', elasticMqAnswers, {
    timeoutMs: 90_000,
    logFile: config,
    hint: hintFor(id),
  }).catch(async (err: Error) => {
    throw new Error(`${err.message}\n--- container output ---\n${await containerLogs(id)}`);
  });
  console.log(
    `elasticmq: started ElasticMQ ${elasticMqVersion} (SQS) in a container (${brokerImages.elasticmq}, ${id.slice(0, 12)}) on 127.0.0.1:${elasticMqPort}`,
  );
  return env;
}

/** Distinguishes two checkouts' containers on one engine (names must be unique). */
function nameSuffix(): string {
  let h = 0;
  for (const ch of runDir) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h.toString(36);
}

/** Stops and removes the brokers' containers env:up recorded. Returns the brokers stopped. */
export async function stopBrokerContainers(): Promise<Broker[]> {
  const brokers: Broker[] = ['kafka', 'rabbitmq', 'elasticmq'];
  const recorded = brokers.filter((b) => fs.existsSync(idFile(b)));
  await Promise.all(brokers.filter((b) => !recorded.includes(b)).map(removeLeftovers));
  if (recorded.length === 0) return [];
  const { getContainerRuntimeClient } = await testcontainers();
  const client = await getContainerRuntimeClient();
  const stopped: Broker[] = [];
  await Promise.all(
    recorded.map(async (broker) => {
      const id = fs.readFileSync(idFile(broker), 'utf8').trim();
      const container = client.container.getById(id);
      try {
        // SIGTERM first: Kafka's controlled shutdown, RabbitMQ's clean stop (it flushes quorum
        // queue state) have 30 s, as in the process backend.
        await client.container.stop(container, { timeout: 30 });
        await client.container.remove(container, { removeVolumes: true });
        stopped.push(broker);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (!/no such container|not found/i.test(message))
          console.error(`env:down: ${broker}'s container ${id.slice(0, 12)}: ${message}`);
      }
      fs.rmSync(idFile(broker), { force: true });
      await removeLeftovers(broker).catch(() => undefined);
    }),
  );
  return stopped;
}

/** Whether env:up recorded broker containers for this run directory. */
export const hasBrokerContainers = () =>
  (['kafka', 'rabbitmq', 'elasticmq'] as const).some((b) => fs.existsSync(idFile(b)));
