// A private RabbitMQ node from Debian's rabbitmq-server package, with its own data, logs,
// config and plugin list under the run directory, listening on loopback only. It is started
// through the package's inner scripts (not /usr/sbin's wrappers, which switch user and use
// the system node) so it never touches a system-wide RabbitMQ.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureBrokerTls } from './brokerTls';
import { gatewayPorts, podGateway } from './k8s/node/podNetwork';
import { runDir } from './paths';
import { portOpen, runningPid, startDetached, stop, waitFor } from './processes';

const amqpPort = 5672;
const managementPort = 15672;
/** TLS listeners (test/env/brokerTls.ts), for workloads that declare a CA Secret. */
const amqpsPort = 5671;
const managementTlsPort = 15671;
const epmdPort = 4369;
export const rabbitHome = path.join(runDir, 'rabbitmq');
const home = rabbitHome;
const bin = process.env.QS_RABBITMQ_BIN ?? '/usr/lib/rabbitmq/bin';
export const nodeName = 'queuesplit@localhost';
export const managementUrl = `http://guest:guest@127.0.0.1:${managementPort}`;

function rabbitEnv(): NodeJS.ProcessEnv {
  return { ...process.env, ...rabbitNodeEnv() };
}

/** Where the node keeps its data, logs and config, and how it names itself (both backends). */
export function rabbitNodeEnv(): Record<string, string> {
  return {
    RABBITMQ_NODENAME: nodeName,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_MNESIA_BASE: path.join(home, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(home, 'log'),
    RABBITMQ_CONFIG_FILE: path.join(home, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(home, 'enabled_plugins'),
    RABBITMQ_PID_FILE: path.join(home, 'rabbitmq.pid'),
    ERL_EPMD_ADDRESS: '127.0.0.1',
    ERL_EPMD_PORT: String(epmdPort),
  };
}

/** Writes rabbitmq.conf and enabled_plugins into the node's home (the container backend mounts it
 * at the same path); its listeners bind `bindHost` (0.0.0.0 only in a container whose ports the
 * engine publishes on the host's loopback). */
export function writeConfig(bindHost = '127.0.0.1'): void {
  fs.mkdirSync(path.join(home, 'log'), { recursive: true });
  const tls = ensureBrokerTls();
  fs.writeFileSync(
    path.join(home, 'rabbitmq.conf'),
    [
      `listeners.tcp.default = ${bindHost}:${amqpPort}`,
      `listeners.ssl.default = ${bindHost}:${amqpsPort}`,
      `ssl_options.cacertfile = ${tls.caCert}`,
      `ssl_options.certfile = ${tls.cert}`,
      `ssl_options.keyfile = ${tls.key}`,
      'ssl_options.verify = verify_none',
      'ssl_options.fail_if_no_peer_cert = false',
      `management.tcp.ip = ${bindHost}`,
      `management.tcp.port = ${managementPort}`,
      `management.ssl.ip = ${bindHost}`,
      `management.ssl.port = ${managementTlsPort}`,
      `management.ssl.cacertfile = ${tls.caCert}`,
      `management.ssl.certfile = ${tls.cert}`,
      `management.ssl.keyfile = ${tls.key}`,
      // Statistics every second instead of five: tests still poll with deadlines.
      'collect_statistics_interval = 1000',
      // guest may log in from the real node's pods too (through its gateway, not loopback);
      // the node listens on loopback only, reached from pods by node.sh's DNAT.
      'loopback_users = none',
      'log.console = false',
      'log.file.level = info',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(path.join(home, 'enabled_plugins'), '[rabbitmq_management].\n');
}

export async function overview(): Promise<{ rabbitmq_version: string; erlang_version: string } | undefined> {
  const res = await fetch(`http://127.0.0.1:${managementPort}/api/overview`, {
    headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` },
    signal: AbortSignal.timeout(2000),
  });
  return res.ok ? ((await res.json()) as { rabbitmq_version: string; erlang_version: string }) : undefined;
}

/** The ports the environment's node listens on (all on loopback). */
export const rabbitPorts = [amqpPort, managementPort, amqpsPort, managementTlsPort] as const;

/** What the environment's RabbitMQ adds to test.env, whichever backend runs it. */
export function rabbitMqEnv(): Record<string, string> {
  return {
    AMQP_URL: `amqp://guest:guest@127.0.0.1:${amqpPort}`,
    RABBITMQ_MANAGEMENT_URL: managementUrl,
    // The same broker at the real node's gateway, for workloads' env (test/env/k8s/node/podNetwork.ts).
    AMQP_POD_URL: `amqp://guest:guest@${podGateway}:${gatewayPorts.amqp}`,
    RABBITMQ_POD_MANAGEMENT_URL: `http://guest:guest@${podGateway}:${gatewayPorts.rabbitManagement}`,
    // TLS at the gateway, signed by BROKER_CA_FILE.
    AMQPS_POD_URL: `amqps://guest:guest@${podGateway}:${gatewayPorts.amqps}`,
    RABBITMQ_POD_MANAGEMENT_TLS_URL: `https://guest:guest@${podGateway}:${gatewayPorts.rabbitManagementTls}`,
    BROKER_CA_FILE: ensureBrokerTls().caCert,
  };
}

export async function startRabbitMq(): Promise<Record<string, string>> {
  const env = rabbitMqEnv();
  if (!fs.existsSync(path.join(bin, 'rabbitmq-server'))) {
    throw new Error(
      `rabbitmq: ${bin}/rabbitmq-server not found. Install Debian's package: apt-get install -y rabbitmq-server`,
    );
  }
  if (runningPid('rabbitmq') !== undefined && (await portOpen(amqpPort))) {
    if (await portOpen(amqpsPort)) {
      console.log(
        `rabbitmq: already running on ${amqpPort}/${managementPort} (TLS ${amqpsPort}/${managementTlsPort})`,
      );
      return env;
    }
    console.log('rabbitmq: running without the TLS listeners (an older env:up): restarting it');
    await stopRabbitMq();
  }
  if (await portOpen(amqpPort)) {
    throw new Error(
      `rabbitmq: port ${amqpPort} is taken by a process this environment did not start (a system RabbitMQ?); stop it first.`,
    );
  }
  writeConfig();
  // epmd is Erlang's name server. We run our own in the foreground so env:down can stop it by
  // pid; if someone else's is already listening, the node simply registers with that one.
  if (runningPid('epmd') === undefined && !(await portOpen(epmdPort))) {
    startDetached('epmd', 'epmd', ['-address', '127.0.0.1', '-port', String(epmdPort)], { env: rabbitEnv() });
    await waitFor('epmd', () => portOpen(epmdPort), {
      timeoutMs: 10_000,
      logFile: path.join(runDir, 'logs', 'epmd.log'),
      hint: 'Is erlang-base installed (apt-get install -y rabbitmq-server pulls it in)?',
    });
  }
  const proc = startDetached('rabbitmq', path.join(bin, 'rabbitmq-server'), [], {
    env: rabbitEnv(),
    cwd: home,
  });
  const logFile = path.join(home, 'log', `${nodeName}.log`);
  await waitFor('RabbitMQ', async () => (await portOpen(amqpPort)) && (await overview()) !== undefined, {
    timeoutMs: 90_000,
    logFile: fs.existsSync(logFile) ? logFile : proc.logFile,
    pid: proc.pid,
    hint: `Check ${proc.logFile} too; free ports ${amqpPort}/${managementPort}; or \`npm run env:down\` and remove ${home}.`,
  });
  const info = await overview();
  console.log(
    `rabbitmq: started RabbitMQ ${info?.rabbitmq_version} (${info?.erlang_version?.split(' [')[0]}) ` +
      `AMQP 127.0.0.1:${amqpPort}, management 127.0.0.1:${managementPort}, pid ${proc.pid}`,
  );
  return env;
}

export async function stopRabbitMq(): Promise<void> {
  // Ask the node to stop cleanly first (it flushes quorum queue state), then by pid.
  if (runningPid('rabbitmq') !== undefined) {
    try {
      execFileSync(path.join(bin, 'rabbitmqctl'), ['-n', nodeName, 'stop'], {
        env: rabbitEnv(),
        stdio: 'ignore',
        timeout: 30_000,
      });
    } catch {
      /* fall through to signals */
    }
  }
  await stop('rabbitmq', 30_000);
  await stop('epmd', 5_000);
}
