// `npm run demo`: a real split, end to end, on embedded defaults. It brings up the local test
// environment (Kafka, RabbitMQ, an SQS-compatible server, a Kubernetes control plane whose pods
// run on a real kubelet), installs the controller, deploys a sample service with a Kafka topic,
// a RabbitMQ queue and an SQS queue, starts alice's split through the sidecar in http mode,
// publishes a mix of messages, and shows where each went. Then it stops the split and shows the
// handback. Exit 1 on any mismatch.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import * as amqp from 'amqplib';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { installController, testInstall } from '../deploy/install';
import { restrictedNamespaceLabels } from '../core/podSecurity';
// The demo runs on the test environment (npm run env:up) and reads it with the loaders it
// shares with the suites (fixtures/env/).
import { adminConfig } from '../fixtures/env/kube';
import { repoRoot, runDir } from '../fixtures/env/paths';
import { records } from '../fixtures/env/records';
import { readServices } from '../fixtures/env/services';
import { startHandler } from './handler';
import {
  appGroup,
  awsSecret,
  demoNamespace,
  paymentsQueue,
  invoicesQueue,
  ordersTopic,
  demoShop,
  workloadName,
} from './sampleWorkload';

class SidecarExited extends Error {
  constructor(code: number) {
    super(`the sidecar exited with code ${code}; its error is above`);
  }
}

const bold = (s: string) => `\x1b[1m${s}\x1b[0m`;
const green = (s: string) => `\x1b[32m${s}\x1b[0m`;
const red = (s: string) => `\x1b[31m${s}\x1b[0m`;
const step = (n: number, text: string) => console.log(`\n${bold(`[${n}]`)} ${bold(text)}`);
const say = (text: string) => console.log(`    ${text}`);

async function waitFor<T>(
  what: string,
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 120_000,
): Promise<T> {
  const started = Date.now();
  let lastTick = 0;
  for (;;) {
    let value: T | undefined;
    try {
      value = await read();
    } catch (err) {
      if (err instanceof SidecarExited) throw err;
    }
    if (value !== undefined && ok(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not reached within ${timeoutMs / 1000}s`);
    if (Date.now() - lastTick > 10_000) {
      say(`… ${what} (${Math.round((Date.now() - started) / 1000)}s)`);
      lastTick = Date.now();
    }
    await sleep(500);
  }
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited ${code}`)),
    );
  });
}

interface SidecarLine {
  type: string;
  stage?: string;
  message?: string;
  phase?: string;
  suggestedAction?: string;
}

function startSidecar(kubeconfig: string, target: string): { child: ChildProcess; lines: SidecarLine[] } {
  const child = spawn(
    process.execPath,
    [
      path.join(repoRoot, 'dist', 'sidecar.js'),
      `--kubeconfig=${kubeconfig}`,
      `--namespace=${demoNamespace}`,
      `--workload=deployment/${workloadName}`,
      '--owner=alice',
      '--filter=x-queue-split-user=alice',
      '--mode=http',
      `--target=${target}`,
      `--state-file=${path.join(runDir, `demo-sidecar-${demoNamespace}.json`)}`,
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: SidecarLine[] = [];
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const msg = JSON.parse(line) as SidecarLine;
      lines.push(msg);
      if (msg.type === 'progress' || msg.type === 'ready' || msg.type === 'detached') {
        say(
          `sidecar ${msg.type}${msg.stage ? `/${msg.stage}` : ''}: ${msg.message ?? ''}${msg.phase ? ` (${msg.phase})` : ''}`,
        );
      }
      if (msg.type === 'warning' || msg.type === 'error') {
        say(
          `sidecar ${msg.type}: ${msg.message ?? ''}${msg.suggestedAction ? ` → ${msg.suggestedAction}` : ''}`,
        );
      }
    } catch {
      /* not a protocol line */
    }
  });
  child.stderr!.resume(); // human logs; the demo narrates from the JSON lines
  return { child, lines };
}

async function main(): Promise<void> {
  const started = Date.now();
  step(
    1,
    'Bringing up the real environment (Kafka, RabbitMQ, SQS, Kubernetes control plane; cached after the first run)',
  );
  await run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test/env/up.ts')]);
  const services = readServices();
  const kc = adminConfig(services.kubeconfig);

  step(2, 'Installing the Queue Split controller (CRD, least-privilege RBAC, controller Deployment)');
  await installController(kc, testInstall);
  say(green('controller ready'));

  step(
    3,
    `Deploying the sample service "${workloadName}": orders from Kafka topic ${ordersTopic}, invoices from RabbitMQ queue ${invoicesQueue}, payments from SQS queue ${paymentsQueue}`,
  );
  const kafka = new Kafka({
    clientId: 'queuesplit-demo',
    brokers: services.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic: ordersTopic, numPartitions: 3 }] });
  const conn = await amqp.connect(services.amqpUrl);
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(invoicesQueue, { durable: true });
  // ElasticMQ takes any keys; the service reads them from a Secret as it would on AWS.
  const sqs = new SQSClient({
    endpoint: services.sqs.endpoint,
    region: services.sqs.region,
    credentials: { accessKeyId: 'demo', secretAccessKey: 'demo' },
  });
  // A short visibility timeout keeps the engine's proofs (one visibility timeout long) short.
  await sqs.send(
    new CreateQueueCommand({ QueueName: paymentsQueue, Attributes: { VisibilityTimeout: '5' } }),
  );
  const sqsUrl = (endpoint: string) => `${endpoint}/000000000000/${paymentsQueue}`;
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  // The namespace enforces PodSecurity `restricted`: the sample service and the queue-agent comply.
  await core
    .createNamespace({ body: { metadata: { name: demoNamespace, labels: restrictedNamespaceLabels } } })
    .catch(() => undefined);
  await waitFor(
    'namespace ready',
    () => core.readNamespacedServiceAccount({ name: 'default', namespace: demoNamespace }),
    () => true,
  );
  await core.createNamespacedSecret({
    namespace: demoNamespace,
    body: { metadata: { name: awsSecret }, stringData: { id: 'demo-key-id', secret: 'demo-secret-key' } },
  });
  await apps
    .deleteNamespacedDeployment({ name: workloadName, namespace: demoNamespace })
    .catch(() => undefined);
  await waitFor(
    'previous demo workload gone',
    () =>
      apps.readNamespacedDeployment({ name: workloadName, namespace: demoNamespace }).then(
        () => false,
        () => true,
      ),
    (gone) => gone,
  );
  await apps.createNamespacedDeployment({
    namespace: demoNamespace,
    body: demoShop({
      kafkaBrokers: services.inCluster.kafkaBrokers.join(','),
      amqpUrl: services.inCluster.amqpUrl,
      managementUrl: services.inCluster.rabbitManagementUrl,
      payments: {
        queueUrl: sqsUrl(services.sqs.podEndpoint),
        endpoint: services.sqs.podEndpoint,
        region: services.sqs.region,
        secretName: awsSecret,
      },
    }),
  });
  await waitFor(
    'the service is running',
    () => apps.readNamespacedDeployment({ name: workloadName, namespace: demoNamespace }),
    (d) => d.status?.readyReplicas === 1,
  );
  say(green('shop is consuming all three queues'));

  const tag = Date.now().toString(36);
  const handler = await startHandler();
  step(4, `Starting alice's split through the sidecar (http delivery to her local handler ${handler.url})`);
  const splitStarted = Date.now();
  const sidecar = startSidecar(services.kubeconfig, handler.url);
  await waitFor(
    'the sidecar reports ready',
    async () => {
      if (sidecar.child.exitCode !== null) throw new SidecarExited(sidecar.child.exitCode);
      return sidecar.lines.some((l) => l.type === 'ready');
    },
    (ok) => ok,
    240_000,
  );
  if (sidecar.lines.some((l) => l.type === 'error')) throw new Error('the sidecar reported an error');
  say(green(`split ACTIVE in ${((Date.now() - splitStarted) / 1000).toFixed(1)}s`));

  step(5, 'Publishing a mix of messages to the real sources');
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  type Queue = 'orders' | 'invoices' | 'payments';
  const plan: { id: string; queue: Queue; user: string | undefined }[] = [];
  for (const [i, user] of ['alice', 'bob', undefined, 'alice', 'carol', 'alice'].entries()) {
    plan.push({ id: `order-${tag}-${i}`, queue: 'orders', user });
    plan.push({ id: `invoice-${tag}-${i}`, queue: 'invoices', user });
    plan.push({ id: `payment-${tag}-${i}`, queue: 'payments', user });
  }
  const publish = async (m: { id: string; queue: Queue; user: string | undefined }) => {
    const headers: Record<string, string> = m.user ? { 'x-queue-split-user': m.user } : {};
    if (m.queue === 'orders') {
      await producer.send({
        topic: ordersTopic,
        messages: [{ key: m.id, value: m.id, headers: { ...headers, 'x-message-id': m.id } }],
      });
    } else if (m.queue === 'invoices') {
      ch.sendToQueue(invoicesQueue, Buffer.from(m.id), { messageId: m.id, persistent: true, headers });
    } else {
      const attributes = { ...headers, 'message-id': m.id };
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: sqsUrl(services.sqs.endpoint),
          MessageBody: m.id,
          MessageAttributes: Object.fromEntries(
            Object.entries(attributes).map(([k, v]) => [k, { DataType: 'String', StringValue: v }]),
          ),
        }),
      );
    }
  };
  for (const m of plan) await publish(m);
  await ch.waitForConfirms();
  say(
    `${plan.length} messages: ${plan.filter((m) => m.user === 'alice').length} carry x-queue-split-user=alice`,
  );

  const expectAlice = plan.filter((m) => m.user === 'alice').map((m) => m.id);
  const expectApp = plan.filter((m) => m.user !== 'alice').map((m) => m.id);
  const appSeen = () =>
    new Set(records((r) => r.event === 'message').flatMap((r) => (r.event === 'message' ? [r.id] : [])));
  await waitFor(
    "alice's handler has her messages",
    async () => handler.received.length,
    (n) => n >= expectAlice.length,
  );
  await waitFor(
    'the cluster app has the rest',
    async () => appSeen(),
    (seen) => expectApp.every((id) => seen.has(id)),
  );

  step(6, 'Where each message went');
  const aliceGot = new Set(handler.received.map((r) => r.id));
  const app = appSeen();
  let mismatches = 0;
  console.log(`    ${'message'.padEnd(22)} ${'queue'.padEnd(9)} ${'header user'.padEnd(12)} destination`);
  for (const m of plan) {
    const where = [aliceGot.has(m.id) ? "alice's handler" : '', app.has(m.id) ? 'cluster app' : ''].filter(
      Boolean,
    );
    const want = m.user === 'alice' ? "alice's handler" : 'cluster app';
    const ok = where.length === 1 && where[0] === want;
    if (!ok) mismatches++;
    console.log(
      `    ${m.id.padEnd(22)} ${m.queue.padEnd(9)} ${(m.user ?? '—').padEnd(12)} ${(ok ? green : red)(where.join(' + ') || 'nowhere (yet)')}`,
    );
  }
  say(
    `alice: ${aliceGot.size} · cluster app: ${expectApp.filter((id) => app.has(id)).length} · mismatches: ${mismatches}`,
  );

  step(7, 'Stopping the split (SIGTERM to the sidecar): the route drains and the app gets its queues back');
  const envOf = (
    d: Awaited<ReturnType<typeof apps.readNamespacedDeployment>>,
    container: string,
    name: string,
  ) =>
    d.spec?.template.spec?.containers.find((c) => c.name === container)?.env?.find((e) => e.name === name)
      ?.value;
  sidecar.child.kill('SIGTERM');
  const exit = await new Promise<number | null>((resolve) => sidecar.child.once('exit', resolve));
  say(`sidecar exited ${exit}`);
  await waitFor(
    'handback complete (original env restored, finalizer removed)',
    () => apps.readNamespacedDeployment({ name: workloadName, namespace: demoNamespace }),
    (d) =>
      !(d.metadata?.finalizers ?? []).includes('queuesplit.dev/handback') &&
      envOf(d, 'invoices-consumer', 'SOURCE_QUEUE') === invoicesQueue &&
      envOf(d, 'payments-consumer', 'QUEUE_URL') === sqsUrl(services.sqs.podEndpoint) &&
      d.status?.readyReplicas === 1 &&
      d.status.updatedReplicas === 1 &&
      d.status.replicas === 1,
    240_000,
  );
  const afterPlan = (['orders', 'invoices', 'payments'] as const).map((queue) => ({
    id: `${queue.slice(0, -1)}-${tag}-after`,
    queue,
    user: 'alice',
  }));
  for (const m of afterPlan) await publish(m);
  await ch.waitForConfirms();
  const after = afterPlan.map((m) => m.id);
  await waitFor(
    'the app consumes the sources again (even alice-tagged messages)',
    async () => appSeen(),
    (seen) => after.every((id) => seen.has(id)),
  );
  const group = await admin.fetchOffsets({ groupId: appGroup, topics: [ordersTopic] });
  say(
    `the app's own group ${appGroup} resumed on ${ordersTopic}: offsets ${group[0]?.partitions.map((p) => `${p.partition}:${p.offset}`).join(' ')}`,
  );
  say(green('handback complete: the app consumes its own topic and queues again'));

  const all = new Set([...appSeen(), ...aliceGot]);
  const lost = [...plan.map((m) => m.id), ...after].filter((id) => !all.has(id));
  await producer.disconnect();
  await admin.disconnect();
  await conn.close();
  sqs.destroy();
  handler.close();
  await core.deleteNamespace({ name: demoNamespace }).catch(() => undefined);
  step(8, 'Result');
  say(
    `lost: ${lost.length} · misrouted: ${mismatches} · total ${((Date.now() - started) / 1000).toFixed(0)}s`,
  );
  if (lost.length > 0 || mismatches > 0 || exit !== 0) {
    console.log(red('\nDEMO FAILED'));
    process.exit(1);
  }
  console.log(green('\nDemo passed: every message reached exactly the right place, and none was lost.'));
  console.log(
    'The environment stays up for exploring (KUBECONFIG=.env-run/kubeconfig); `npm run env:down` stops it.',
  );
}

main().catch((err: unknown) => {
  console.error(red(`\ndemo failed: ${err instanceof Error ? err.message : String(err)}`));
  process.exit(1);
});
