// The local sidecar: a child process of the extension (or a terminal command) that serves one
// developer session. This file is CLI wiring only: flags (commander) → options → Session.
// stdout carries the JSON-lines protocol (core/sidecarProtocol.ts); stderr is for people.
import { Command, CommanderError, Option } from 'commander';
import { productVersion } from '../core/version';
import { SidecarError, errorText } from '../laptop/errors';
import { buildOptions, collect, intIn, type RawOptions } from './options';
import { Reporter } from './output';
import { createInterface } from 'node:readline';
import { parseSidecarRequest, SECRET_SETTINGS_ENV, SIDECAR_EXIT_CODES } from '../core/sidecarProtocol';
import { Session } from './lifecycle';
import { PROVIDER_NAMES, PROVIDERS } from '../core/providers';
import { sidecarProvider } from './providers/registry';

const reporter = new Reporter();

function usageFailure(err: SidecarError): never {
  reporter.emit({
    type: 'error',
    code: 'usage',
    message: err.message,
    suggestedAction: err.suggestedAction,
    ...(err.flag !== undefined ? { flag: err.flag } : {}),
  });
  process.exit(SIDECAR_EXIT_CODES.usage);
}

const relayFlags = PROVIDER_NAMES.map((provider) => {
  const { flag, arg, help } = sidecarProvider(provider).relay;
  return [provider, new Option(`${flag} ${arg}`, help)] as const;
});

const program = new Command('queue-split-sidecar')
  .description(
    'Serves one Queue Split session: creates (or adopts) your QueueSplit, waits until it is Active, renews its lease ' +
      'and hands your session messages to the process you debug. On SIGINT/SIGTERM, or a {"type":"stop"} line on stdin, it detaches and reports the drain.\n\n' +
      'stdout: one JSON object per line (hello, progress, warning, error, ready, delivered, failed, rejected, status, detached). stderr: logs for people.\n\n' +
      'A message your handler keeps failing blocks its queue (the "failed" lines name it); {"type":"retry","queue":Q,"messageId":ID} on stdin retries it now, ' +
      '{"type":"reject","queue":Q,"messageId":ID} rejects it as your app would (RabbitMQ: dead-lettered by the queue\'s rules; Kafka: skipped).',
  )
  .version(productVersion)
  .helpOption('-h, --help', 'show this help')
  .optionsGroup('Split:')
  .option(
    '-w, --workload <kind/name>',
    'workload to split: deployment/NAME, statefulset/NAME, or NAME (a Deployment)',
  )
  .option(
    '--split <name>',
    'adopt this existing QueueSplit (e.g. created by the extension) instead of creating one',
  )
  .option(
    '-q, --queue <name>',
    'logical queue from the workload declaration; repeatable or comma-separated (default: all declared)',
    collect(true),
  )
  .option(
    '-f, --filter <filter>',
    'route filter (default: x-queue-split-user=<owner>): k=v terms AND-ed with ",", alternatives joined by " or "; also k!=v, k^=prefix, k~=regex, "k in (a, b)", has(k), baggage:<member>=v, body:$.field=v, or the JSON form',
  )
  .option(
    '--owner <name>',
    'who the split is for (default: your Kubernetes user name; another name only for members of queuesplit:admins)',
  )
  .option(
    '--preflight-only',
    'check what creating this split needs (access, the declaration, the mode: http target, relay broker, env broker reach and login), create nothing, exit 0 if all pass',
  )
  .option('--lease-seconds <n>', 'lease duration; renewed every third of it', intIn(10, 3600), 60)
  .option(
    '--state-file <path>',
    'keeps the route id across restarts (default: $XDG_STATE_HOME/queuesplit/<context>-<namespace>-<workload>.json)',
  )
  .option(
    '--ready-timeout <seconds>',
    'how long to wait for the split to become Active',
    intIn(1, 86_400),
    300,
  )
  .option(
    '--detach-timeout <seconds>',
    'how long to wait for the drain after detaching',
    intIn(0, 86_400),
    300,
  )
  .optionsGroup('Delivery:')
  .addOption(
    new Option('-m, --mode <mode>', 'how messages reach your process')
      .choices(['http', 'env', 'relay'])
      .default('http'),
  )
  .addOption(
    new Option(
      '--transport <how>',
      'http/relay: who reads your session shadow — agent: the queue-agent streams it here through the API server (no broker address or credential on this machine); broker: this sidecar, which needs both',
    )
      .choices(['agent', 'broker'])
      .default('agent'),
  )
  .option(
    '--agent-url <url>',
    'agent transport: the session URL of a port-forward you run yourself (default: the sidecar port-forwards through the API server)',
  )
  .option('--target <url>', 'http: URL each message is POSTed to (CloudEvents binary mode)')
  .option(
    '--http-timeout <seconds>',
    'http: give up on one attempt after this long (0 = wait; breakpoints pause handlers)',
    intIn(0, 86_400),
    0,
  )
  .option(
    '--retry-max-delay <ms>',
    'http/relay: cap of the exponential retry backoff',
    intIn(1, 3_600_000),
    30_000,
  )
  .option(
    '--reject-after <attempts>',
    "http/relay: reject a message once this many attempts failed, as your app's reject would (RabbitMQ: dead-lettered by the queue's rules, or discarded without a dead-letter exchange; Kafka: skipped) (default: retry until delivered)",
  )
  // Not --env-file: Node 20 itself reads that flag even after the script name.
  .option(
    '--env-out <path>',
    'env: write the complete env as a dotenv file (secrets included, mode 0600), removed when the sidecar exits ' +
      '(default: $XDG_STATE_HOME/queuesplit/<context>-<namespace>-<workload>.env, next to the state file)',
  );
// Each provider's relay flag (the local broker of its kind), from the provider table.
for (const [, flag] of relayFlags) program.addOption(flag);
program
  .option(
    '--relay-to <queue=dest>',
    "relay: local topic/queue for a queue (default: the workload's own topic/queue name); repeatable",
    collect(false),
  )
  .optionsGroup('Broker connection (env mode, and --transport broker):')
  .option(
    '--env <NAME=VALUE>',
    "use this value for a container env var instead of the workload's (e.g. a Secret you may not read); repeatable",
    collect(false),
  )
  .option(
    '--map-address <from=to>',
    'dial host[:port] `to` wherever the cluster says `from` (port-forwards); repeatable',
    collect(false),
  )
  .option('--tls-ca-file <path>', 'CA bundle (PEM) instead of the declared caSecret')
  .option(
    '--settings <file>',
    `YAML/JSON with env, addressMap, tlsCaFile, target, relay {${PROVIDER_NAMES.map((p) => PROVIDERS[p].relay.settingsKey).join(', ')}, to}; flags win. Credentials (env values, relay broker URLs) may come instead as the same JSON, env and relay only, in $${SECRET_SETTINGS_ENV}, over the file`,
  )
  .optionsGroup('Kubernetes:')
  .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG or ~/.kube/config)')
  .option('--context <name>', 'kubeconfig context (default: the current one)')
  .option('-n, --namespace <ns>', "namespace of the workload (default: the context's)")
  .addOption(
    new Option('--poll-interval <ms>', 'how often to read the QueueSplit')
      .argParser(intIn(100, 60_000))
      .default(1000)
      .hideHelp(),
  )
  .addOption(
    new Option('--stop-grace <seconds>', 'on stop, let an in-flight delivery finish this long')
      .argParser(intIn(0, 600))
      .default(5)
      .hideHelp(),
  )
  .addHelpText(
    'after',
    `
Examples:
  http   POST your messages (x-queue-split-user=<your OS user>) to a local handler:
    queue-split-sidecar -w deployment/orders --target http://127.0.0.1:8080/events
  http   for alice, only her EU orders (pairs are AND-ed):
    queue-split-sidecar -w orders --owner alice -f x-queue-split-user=alice,region=eu --target http://127.0.0.1:8080/
  env    your own consumer reads the session shadow; env printed, secrets in the file:
    queue-split-sidecar -w orders -q orders -m env --owner alice --env-out .queuesplit.env
  env    a statefulset, filtered on a tenant header instead of the user:
    queue-split-sidecar -w statefulset/billing -m env --owner alice -f x-tenant=acme-test
  http   your tenants by prefix (also ~= regex, "k in (a, b)", and " or " between alternatives):
    queue-split-sidecar -w orders --owner alice -f x-tenant^=alice- --target http://127.0.0.1:8080/
  http   your OpenTelemetry routing key, a W3C baggage member:
    queue-split-sidecar -w orders --owner alice -f baggage:user=alice --target http://127.0.0.1:8080/
  http   orders of one customer, read from the JSON body:
    queue-split-sidecar -w orders --owner alice -f body:$.customer.id=C-42 --target http://127.0.0.1:8080/
  relay  republish into a local Kafka under another topic name:
    queue-split-sidecar -w orders -m relay --owner alice -f x-queue-split-user=alice --relay-kafka-brokers 127.0.0.1:9092 --relay-to orders=orders-local
  relay  a RabbitMQ queue into a local RabbitMQ:
    queue-split-sidecar -w orders -q invoices -m relay --owner alice --relay-amqp-url amqp://127.0.0.1:5672
  broker the sidecar reads the brokers itself, through a port-forward:
    queue-split-sidecar -w orders --transport broker --map-address kafka.kafka.svc:9092=127.0.0.1:19092 --target http://127.0.0.1:8080/

http and relay get your messages from the workload's queue-agent through the Kubernetes API (port-forward):
no broker address or credential reaches this machine. env mode (and --transport broker) connect to the
brokers from here: they need their addresses and credentials.

Exit codes: 0 stopped and detached (also when the reader of stdout goes away: a clean detach), 1 error (see the
"error" line), 2 bad flags, 130 interrupted twice. The --env-out file is removed on every exit but kill -9.`,
  )
  .exitOverride()
  .configureOutput({ outputError: () => undefined }); // errors are reported as JSON below

try {
  program.parse(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    if (err.exitCode === 0) process.exit(0); // --help, --version
    // "option '-m, --mode <mode>' argument ..." / "unknown option '--bogus'": name the long flag.
    const spec = /'([^']+)'/.exec(err.message)?.[1] ?? '';
    const flag = /--[\w-]+/.exec(spec)?.[0] ?? /-\w/.exec(spec)?.[0];
    usageFailure(
      new SidecarError(
        'usage',
        err.message.replace(/^error: /, ''),
        'Run with --help for the flags and their values.',
        flag,
      ),
    );
  }
  throw err;
}

let options;
try {
  const given = program.opts<RawOptions & Record<string, unknown>>();
  const relayBrokers = Object.fromEntries(
    relayFlags.flatMap(([provider, flag]) => {
      const text = given[flag.attributeName()];
      return typeof text === 'string' ? [[provider, text]] : [];
    }),
  );
  // Credentials the parent handed over in the environment: read once, then dropped from this
  // process's environment so that nothing it starts inherits them.
  const secretSettings = process.env[SECRET_SETTINGS_ENV];
  Reflect.deleteProperty(process.env, SECRET_SETTINGS_ENV);
  options = buildOptions({
    ...given,
    relayBrokers,
    ...(secretSettings !== undefined && secretSettings !== '' ? { secretSettings } : {}),
  });
} catch (err) {
  usageFailure(
    err instanceof SidecarError
      ? err
      : new SidecarError('usage', errorText(err), 'Run with --help for the flags and their values.'),
  );
}

const session = new Session(options, reporter);
// The parent stopped reading (its end of the pipe closed): it cannot see us any more, so stop
// cleanly — detach the split and exit 0 — rather than serve a session nobody watches.
reporter.whenStdoutCloses((reason) => session.requestStop(reason));
let signals = 0;
// SIGHUP: the terminal went away; the same clean stop (and env-file removal) as Ctrl-C.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (++signals > 1) {
      reporter.log(
        `${signal} again: exiting without waiting; the split's lease runs out and the controller drains it.`,
      );
      process.exit(SIDECAR_EXIT_CODES.interrupted);
    }
    session.requestStop(signal);
  });
}
// A stop request on stdin (protocol.ts StopRequest) stops like the first signal. End of stdin is
// NOT a stop: run from a script or with </dev/null the sidecar must keep serving.
createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  const request = parseSidecarRequest(line);
  if (request?.type === 'stop') session.requestStop('stop request');
  else if (request?.type === 'publish') void session.publish(request);
  else if (request?.type === 'retry' || request?.type === 'reject') session.blockedRequest(request);
});
process.on('unhandledRejection', (reason) => {
  reporter.emit({
    type: 'error',
    code: 'internal',
    message: `Unexpected failure: ${errorText(reason)}`,
    suggestedAction: 'Report this with the sidecar log (stderr).',
  });
  process.exit(SIDECAR_EXIT_CODES.error);
});

session.run().then(
  (code) => process.exit(code),
  (err: unknown) => {
    reporter.emit({
      type: 'error',
      code: 'internal',
      message: `Unexpected failure: ${errorText(err)}`,
      suggestedAction: 'Report this with the sidecar log (stderr).',
    });
    process.exit(SIDECAR_EXIT_CODES.error);
  },
);
