// test-order: first (three split lives with kills: about 3 minutes)
// Session delivery through the cluster (docs/design.md §8), as a developer meets it: a user bound
// to the `queuesplit-developer` role only, on a "laptop" (a network namespace,
// test/support/devNetns.ts) from which no broker address is reachable — only the API server. A
// workload with one Kafka topic and one RabbitMQ queue whose connection env comes from a Secret,
// both over TLS with their CA in another Secret (declared `tls: {caSecret, caKey}`); its
// queue-agent runs on the real node, reads the session shadows and streams them to the sidecar
// through the API server's port-forward. The port-forward, the sidecar and the queue-agent are each
// killed during delivery; nothing is lost, the handback gives the app everything else.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import type * as amqp from 'amqplib';
import { AppsV1Api, CoreV1Api, KubeConfig, PortForward } from '@kubernetes/client-node';
import type { Producer } from 'kafkajs';
import WebSocket from 'ws';
import { shopDeclaration, shopDeployment } from '../../fixtures/shop';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import { newSessionSecret } from '../../core/sessionSecret';
import { SESSION_PATH, SESSION_SUBPROTOCOL, decodeAgentFrame } from '../../core/sessionStream';
import { applyObjects } from '../../deploy/apply';
import { developerBinding } from '../../deploy/manifests';
import { agentPodSelector } from '../../sidecar/agentPortForward';
import { userKubeconfig } from '../env/k8s/kubeconfig';
import { runDir } from '../env/paths';
import { createDevNetns, type DevNetns } from '../support/devNetns';
import { clusterFixture } from '../support/clusterFixture';
import { createTopic, kafkaClient, produceIds } from '../support/kafkaSplit';
import { records } from '../support/kube';
import { pollUntil } from '../support/poll';
import { killQueueAgent } from '../support/processes';
import { ids, publishTo } from '../support/rabbitSplit';
import { createSecret } from '../support/secrets';
import { uniqueName } from '../support/services';
import { waitForSplitGone } from '../support/splits';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../../core/podSecurity';
import { SidecarProcess, sidecarBundle } from '../sidecar/support';
import { answerChallenge } from '../support/sessionHello';

const fx = clusterFixture('qs-stream', { rabbitmq: true, kafka: true });
const services = fx.services;
const caFile = path.join(runDir, 'k8s', 'pki', 'ca.crt');
let admin: KubeConfig;
let namespace: string;
let netns: DevNetns;
let userA: string;
let kubeconfigA: string;
let kubeconfigB: string;
let nsKubeconfigA: string;
let stateDir: string;
let producer: Producer;
let ch: amqp.ConfirmChannel;
let server: http.Server;
let targetUrl: string;
let topic: string;
let queue: string;
const sidecars: SidecarProcess[] = [];
/** What the developer's local handler received: x-message-id (Kafka) or the AMQP message id. */
const received: string[] = [];

fx.setup(async () => {
  ({ kc: admin, namespace, ch, producer } = fx);
  const suffix = namespace.slice(-6);
  userA = `dev-stream-a-${suffix}`;
  const userB = `dev-stream-b-${suffix}`;
  for (const user of [userA, userB])
    await applyObjects(admin, [developerBinding(namespace, { kind: 'User', name: user })]);
  kubeconfigA = path.join(runDir, `kubeconfig-${namespace}-a`);
  kubeconfigB = path.join(runDir, `kubeconfig-${namespace}-b`);
  await userKubeconfig(admin, userA, namespace, caFile, kubeconfigA);
  await userKubeconfig(admin, userB, namespace, caFile, kubeconfigB);
  netns = createDevNetns(7);
  nsKubeconfigA = netns.kubeconfig(kubeconfigA, path.join(runDir, `kubeconfig-${namespace}-a-netns`));
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-stream-laptop-'));

  // The developer's debugged process, on the laptop: reachable from the namespace, nothing else is.
  server = http.createServer((req, res) => {
    const id = req.headers['x-message-id'] ?? req.headers['ce-id'];
    received.push(String(id));
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, netns.hostAddress, resolve));
  const port = (server.address() as AddressInfo).port;
  netns.allow(port);
  targetUrl = `http://${netns.hostAddress}:${port}/`;

  topic = uniqueName('stream-orders');
  queue = uniqueName('stream-invoices');
  await createTopic(fx.kafka, topic, 3);
  await ch.assertQueue(queue, { durable: true });
  // The team's service; its broker connections come from a Secret the developer may not read,
  // over TLS with the CA from a second Secret, which the app mounts to trust it.
  await createSecret(admin, namespace, 'brokers', {
    kafka: services.inCluster.kafkaTlsBrokers.join(','),
    amqp: services.inCluster.amqpsUrl,
  });
  await createSecret(admin, namespace, 'broker-ca', {
    'ca.crt': fs.readFileSync(services.brokerCaFile, 'utf8'),
  });
  const body = shopDeployment(
    { kafkaBrokers: '', amqpUrl: '', managementUrl: services.inCluster.rabbitManagementTlsUrl },
    { namespace, name: 'shop', ordersTopic: topic, appGroup: uniqueName('stream-app'), invoicesQueue: queue },
  );
  const tls = '      tls: {caSecret: broker-ca, caKey: ca.crt}\n';
  body.metadata!.annotations![QUEUE_CONFIG_ANNOTATION] = shopDeclaration
    .replace('      sourceEnv: SOURCE_QUEUE\n', `      sourceEnv: SOURCE_QUEUE\n${tls}`)
    .replace('      offsetReset: earliest\n', `      offsetReset: earliest\n${tls}`);
  const pod = body.spec!.template.spec!;
  pod.volumes = [{ name: 'broker-ca', secret: { secretName: 'broker-ca' } }];
  for (const c of pod.containers) {
    for (const e of c.env ?? []) {
      if (e.name === 'KAFKA_BROKERS') e.valueFrom = { secretKeyRef: { name: 'brokers', key: 'kafka' } };
      if (e.name === 'AMQP_URL') e.valueFrom = { secretKeyRef: { name: 'brokers', key: 'amqp' } };
      if (e.valueFrom) delete e.value;
    }
    c.volumeMounts = [{ name: 'broker-ca', mountPath: '/etc/broker-ca', readOnly: true }];
    if (c.name === 'invoices-consumer')
      c.env!.push({ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/broker-ca/ca.crt' });
    if (c.name === 'orders-consumer')
      c.env!.push({ name: 'KAFKA_TLS_CA_FILE', value: '/etc/broker-ca/ca.crt' });
  }
  await admin.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body });
});

// Before the fixture closes the broker clients and deletes the namespace.
fx.defer(async () => {
  for (const s of sidecars) await s.ensureDead();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  netns?.close();
});
fx.defer(() => {
  for (const file of fs.readdirSync(runDir).filter((f) => f.startsWith(`kubeconfig-${namespace}-`)))
    fs.rmSync(path.join(runDir, file), { force: true });
  fs.rmSync(stateDir, { recursive: true, force: true });
});

function startSidecar(bundle: string, state = 'shop'): SidecarProcess {
  const sidecar = new SidecarProcess(
    bundle,
    [
      `--kubeconfig=${nsKubeconfigA}`,
      `--namespace=${namespace}`,
      '--workload=deployment/shop',
      `--target=${targetUrl}`,
      `--state-file=${path.join(stateDir, `${state}.json`)}`,
      '--lease-seconds=30',
      '--detach-timeout=120',
    ],
    { ...process.env, XDG_STATE_HOME: stateDir },
    netns.wrap,
  );
  sidecars.push(sidecar);
  return sidecar;
}

/** Publishes `n` messages for the developer and `n` for the team on both queues; returns the ids. */
async function traffic(tag: string, n: number): Promise<{ mine: string[]; team: string[] }> {
  const mine = [...ids(`${topic}-${tag}`, 'mine', n)];
  const team = [...ids(`${topic}-${tag}`, 'team', n)];
  const mineQ = [...ids(`${queue}-${tag}`, 'mine', n)];
  const teamQ = [...ids(`${queue}-${tag}`, 'team', n)];
  await produceIds(producer, topic, mine, userA);
  await produceIds(producer, topic, team);
  await publishTo(ch, queue, mineQ, userA);
  await publishTo(ch, queue, teamQ);
  return { mine: [...mine, ...mineQ], team: [...team, ...teamQ] };
}

const appGot = (prefixes: readonly string[]) =>
  new Set(
    records((r) => r.event === 'message' && prefixes.some((p) => r.id.startsWith(p))).map((r) =>
      r.event === 'message' ? r.id : '',
    ),
  );

test("from a network namespace that reaches only the API server, a developer-role sidecar gets its Kafka and RabbitMQ messages from the queue-agent (a teammate's port-forward without the secret gets nothing); killing the port-forward, the sidecar and the queue-agent loses nothing; a look-alike pod with its labels is skipped, named, and never connected to", async () => {
  // The laptop: the API server yes, the brokers no (neither their pod addresses nor loopback).
  assert.ok(netns.reaches('10.96.0.1', 443), 'the API server is reachable from the laptop');
  for (const [host, port] of [
    ['10.213.0.1', 19094],
    ['10.213.0.1', 5672],
    ['127.0.0.1', 9092],
    ['127.0.0.1', 5672],
  ] as const)
    assert.ok(!netns.reaches(host, port), `${host}:${port} must not be reachable from the laptop`);

  const bundle = await sidecarBundle();
  let sidecar = startSidecar(bundle);
  const ready = await sidecar.waitFor('ready', () => true, 180_000);
  assert.deepEqual(ready.queues.map((q) => [q.name, q.via]).sort(), [
    ['invoices', 'agent'],
    ['orders', 'agent'],
  ]);
  const sent = { mine: [] as string[], team: [] as string[] };
  const more = async (tag: string) => {
    const t = await traffic(tag, 6);
    sent.mine.push(...t.mine);
    sent.team.push(...t.team);
  };
  const allMineReceived = (what: string) =>
    pollUntil(
      what,
      async () => new Set(received),
      (got) => sent.mine.every((id) => got.has(id)),
      120_000,
    );

  await more('first');
  await allMineReceived('the first messages reached the laptop');

  // A teammate may port-forward to the queue-agent, but without the secret gets nothing.
  assert.deepEqual(await teammateHello(ready.split.routeId), { type: 'refused', code: 'unauthorized' });

  // 1. The port-forward dies: for 4 s every TCP segment from the laptop is answered with a reset;
  // traffic meanwhile makes the stream's connection send (its acks), so it is reset.
  const cut = netns.cut(4_000);
  await more('during-cut');
  await cut;
  await sidecar.waitFor('warning', (w) => w.code === 'stream-interrupted', 60_000);
  await more('after-cut');
  await allMineReceived('messages after the port-forward came back');

  // 2. The queue-agent is killed (its container restarts on the real node).
  await killQueueAgent(admin, namespace, 'shop', 90_000);
  await more('after-agent-kill');
  await allMineReceived('messages after the queue-agent restarted');

  // A look-alike (whoever may create pods in the namespace can make one): a pod with the labels
  // the sidecar selects on, listed before the queue-agent, that logs every connection. The
  // restarted sidecar skips it, naming it, and it never receives a connection (nor would learn
  // what to replay: test/sidecar/agent-stream).
  const lookalike = await startLookalike();
  // 3. The sidecar is killed; started again, it adopts its split (the secret is in its state file).
  sidecar.kill('SIGKILL');
  await sidecar.exited;
  await more('while-sidecar-dead');
  sidecar = startSidecar(bundle);
  await sidecar.waitFor('ready', () => true, 120_000);
  await more('after-sidecar-restart');
  await allMineReceived('messages after the sidecar came back');

  const skipped = sidecars.flatMap((s) => s.of('warning')).filter((w) => w.code === 'agent-lookalike');
  assert.ok(skipped.length >= 1, 'the sidecar reported the look-alike');
  assert.match(
    skipped[0]!.message,
    new RegExp(`Pod ${lookalike.name} \\(it is not controlled by a ReplicaSet`),
  );
  assert.deepEqual(await lookalike.connections(), [], 'the look-alike was never connected to');
  await lookalike.remove();

  // Stop: the route drains, the workload is handed back, the app has everything else.
  const splitName = (await sidecar.waitFor('progress', (m) => m.split !== undefined)).split!.name;
  sidecar.kill('SIGTERM');
  const detached = await sidecar.waitFor('detached', () => true, 180_000);
  assert.equal(detached.drained, true);
  await waitForSplitGone(admin, namespace, splitName, 180_000);
  await pollUntil(
    'every team message reached the cluster app',
    async () => appGot([topic, queue]),
    (got) => sent.team.every((id) => got.has(id)),
    180_000,
  );
  const app = appGot([topic, queue]);
  const both = sent.mine.filter((id) => app.has(id));
  assert.deepEqual(both, [], 'no message of mine reached the app as well');
  assert.deepEqual(
    received.filter((id) => sent.team.includes(id)),
    [],
    'no team message reached the laptop',
  );

  // The laptop never held a broker credential or a Secret value.
  const laptop = [
    ...sidecars.map((s) => `${s.rawStdout.join('\n')}\n${s.stderr}`),
    ...fs
      .readdirSync(stateDir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => fs.readFileSync(path.join(e.parentPath, e.name), 'utf8')),
  ].join('\n');
  for (const secret of [
    services.inCluster.amqpUrl,
    services.amqpUrl,
    ':guest@',
    services.inCluster.kafkaBrokers[0]!,
    services.inCluster.kafkaTlsBrokers[0]!,
  ])
    assert.ok(!laptop.includes(secret), `the laptop side never held ${secret.replace(/:[^:@]*@/, ':***@')}`);
});

test('relay: a developer-role sidecar republishes its Kafka and RabbitMQ messages into a local topic and queue, through the queue-agent', async () => {
  for (const s of sidecars) await s.ensureDead();
  // The developer's local brokers (here the same processes, other names): only the sidecar's
  // relay reaches them; the cluster's shadows are read by the queue-agent.
  const localTopic = uniqueName('stream-relay-local');
  const localQueue = uniqueName('stream-relay-local');
  await createTopic(kafkaClient(services, 'qs-stream-relay'), localTopic, 1);
  await ch.assertQueue(localQueue, { durable: true });
  const bundle = await sidecarBundle();
  const sidecar = new SidecarProcess(
    bundle,
    [
      `--kubeconfig=${kubeconfigA}`,
      `--namespace=${namespace}`,
      '--workload=deployment/shop',
      '--mode=relay',
      `--relay-kafka-brokers=${services.kafkaBrokers.join(',')}`,
      `--relay-amqp-url=${services.amqpUrl}`,
      `--relay-to=orders=${localTopic}`,
      `--relay-to=invoices=${localQueue}`,
      `--state-file=${path.join(stateDir, 'relay.json')}`,
      '--lease-seconds=30',
      '--detach-timeout=120',
    ],
    { ...process.env, XDG_STATE_HOME: stateDir },
  );
  sidecars.push(sidecar);
  const ready = await sidecar.waitFor('ready', () => true, 180_000);
  assert.ok(
    ready.queues.every((q) => q.via === 'agent'),
    'both queues come from the queue-agent',
  );
  const sent = await traffic('relay', 5);
  const relayed = new Set<string>();
  const consumer = kafkaClient(services, 'qs-stream-relay-read').consumer({
    groupId: uniqueName('relay-read'),
  });
  await consumer.connect();
  await consumer.subscribe({ topic: localTopic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      relayed.add(String(message.headers?.['x-message-id'] ?? ''));
    },
  });
  const amqpRead = await ch.consume(localQueue, (m) => {
    if (m) {
      relayed.add(String(m.properties.messageId));
      ch.ack(m);
    }
  });
  try {
    await pollUntil(
      'every message of mine relayed locally',
      async () => relayed,
      (got) => sent.mine.every((id) => got.has(id)),
      120_000,
    );
    assert.deepEqual(
      sent.team.filter((id) => relayed.has(id)),
      [],
      'no team message relayed',
    );
  } finally {
    await ch.cancel(amqpRead.consumerTag);
    await consumer.disconnect();
  }
  sidecar.kill('SIGTERM');
  assert.equal((await sidecar.waitFor('detached', () => true, 180_000)).drained, true);
});

/** B (developer role too) port-forwards to the queue-agent and presents a secret of its own. */
const withoutKey = (labels: Record<string, string>, key: string) =>
  Object.fromEntries(Object.entries(labels).filter(([k]) => k !== key));

/** A pod that copies the queue-agent's labels and placement and logs each connection to its port. */
async function startLookalike() {
  const core = admin.makeApiClient(CoreV1Api);
  const agent = (
    await core.listNamespacedPod({
      namespace,
      labelSelector: agentPodSelector({ kind: 'Deployment', name: 'shop' }),
    })
  ).items.find((p) => p.status?.phase === 'Running')!;
  const name = 'aa-lookalike'; // listed first
  const script =
    "require('http').createServer((q, s) => s.end()).on('connection', () => console.log('connection')).listen(9090)";
  await core.createNamespacedPod({
    namespace,
    body: {
      // Every label the sidecar selects on, but not the ReplicaSet's pod-template-hash: with it,
      // the ReplicaSet adopts the pod as one too many and deletes it (seen on the real node).
      metadata: { name, labels: { ...withoutKey(agent.metadata!.labels!, 'pod-template-hash') } },
      spec: {
        ...(agent.spec!.nodeSelector ? { nodeSelector: agent.spec!.nodeSelector } : {}),
        ...(agent.spec!.tolerations ? { tolerations: agent.spec!.tolerations } : {}),
        securityContext: restrictedPodSecurityContext,
        containers: [
          {
            name: 'lookalike',
            image: agent.spec!.containers[0]!.image!,
            command: ['node', '-e', script],
            ports: [{ name: 'metrics', containerPort: 9090 }],
            securityContext: restrictedContainerSecurityContext,
          },
        ],
      },
    },
  });
  await pollUntil(
    'the look-alike is Ready',
    () => core.readNamespacedPod({ namespace, name }),
    (p) => (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    90_000,
  );
  return {
    name,
    connections: async () =>
      (await core.readNamespacedPodLog({ namespace, name })).split('\n').filter((l) => l === 'connection'),
    remove: () => core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 }),
  };
}

async function teammateHello(routeId: string): Promise<{ type?: string; code?: string }> {
  const kcB = new KubeConfig();
  kcB.loadFromFile(kubeconfigB);
  const pods = await kcB
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace, labelSelector: agentPodSelector({ kind: 'Deployment', name: 'shop' }) });
  const pod = pods.items.find((p) => p.status?.phase === 'Running')!;
  const forward = new PortForward(kcB);
  const server = net.createServer((socket) => {
    // The agent's last frames can arrive after the teammate hung up: the forward then writes to
    // an ended socket, whose EPIPE would otherwise be an uncaught error failing this test.
    socket.on('error', () => undefined);
    void forward
      .portForward(namespace, pod.metadata!.name!, [9090], socket, null, socket)
      .catch(() => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const answer = await new Promise<unknown>((resolve, reject) => {
      const ws = new WebSocket(
        `ws://127.0.0.1:${(server.address() as AddressInfo).port}${SESSION_PATH}`,
        SESSION_SUBPROTOCOL,
      );
      // The teammate answers the challenge with a key of their own (they cannot have the route's).
      void answerChallenge(ws, routeId, newSessionSecret(), 4).catch(reject);
      ws.on('message', (data: Buffer) => {
        const decoded = decodeAgentFrame(data);
        if (decoded.ok && decoded.frame.type === 'challenge') return;
        resolve(decoded.ok ? decoded.frame : decoded.problem);
        ws.terminate();
      });
      ws.on('error', reject);
    });
    const frame = answer as { type?: string; code?: string };
    return { type: frame.type, code: frame.code };
  } finally {
    server.close();
  }
}
