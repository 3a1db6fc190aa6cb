// A RabbitMQ consumer workload, annotated for Queue Split, as the cluster suites use it.
import * as amqp from 'amqplib';
import { AppsV1Api, type KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import type { ClusterFixture } from './clusterFixture';
import { waitForHandback } from './handback';
import { pollUntil } from './poll';
import { asStatefulSet, fixtureDeployment, records, waitForReadyPods } from './kube';
import { createSecret, messageBody, messageHeaders } from './secrets';
import { uniqueName, type Services } from './services';

export const rabbitDeclaration = [
  'queues:',
  '  - name: orders',
  '    rabbitmq:',
  '      urlEnv: AMQP_URL',
  '      managementUrlEnv: RABBITMQ_MANAGEMENT_URL',
  '      sourceEnv: SOURCE_QUEUE',
].join('\n');

export async function deployRabbitApp(
  kc: KubeConfig,
  services: Services,
  namespace: string,
  name: string,
  source: string,
  replicas = 1,
  kind: 'Deployment' | 'StatefulSet' = 'Deployment',
  shape: (d: V1Deployment) => void = () => undefined,
): Promise<void> {
  await createSecret(kc, namespace, 'amqp', { url: services.inCluster.amqpUrl });
  const body = fixtureDeployment({
    name,
    image: 'queuesplit/fixture-rabbitmq-consumer',
    replicas,
    annotations: { [QUEUE_CONFIG_ANNOTATION]: rabbitDeclaration },
    env: [
      { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: 'amqp', key: 'url' } } },
      { name: 'RABBITMQ_MANAGEMENT_URL', value: services.inCluster.rabbitManagementUrl },
      { name: 'SOURCE_QUEUE', value: source },
    ],
  });
  shape(body);
  const apps = kc.makeApiClient(AppsV1Api);
  if (kind === 'Deployment') await apps.createNamespacedDeployment({ namespace, body });
  else await apps.createNamespacedStatefulSet({ namespace, body: asStatefulSet(body) });
  await waitForReadyPods(kc, namespace, name, replicas);
}

/**
 * A fresh durable source queue (named after `workload`) and the app consuming it, in the
 * fixture's namespace; returns the queue's name.
 */
export async function rabbitApp(
  fx: Pick<ClusterFixture, 'kc' | 'services' | 'namespace' | 'ch'>,
  workload: string,
  options: {
    replicas?: number;
    kind?: 'Deployment' | 'StatefulSet';
    /** Changes the Deployment before it is created (a StatefulSet is made from it). */
    shape?: (d: V1Deployment) => void;
  } = {},
): Promise<string> {
  const source = uniqueName(workload);
  await fx.ch.assertQueue(source, { durable: true });
  await deployRabbitApp(
    fx.kc,
    fx.services,
    fx.namespace,
    workload,
    source,
    options.replicas,
    options.kind,
    options.shape,
  );
  return source;
}

/** Waits until a RabbitMQ app is handed back: on its own `source` again (handback.ts says how). */
export function waitForRabbitHandback(
  kc: KubeConfig,
  namespace: string,
  workload: string,
  source: string,
  options: { replicas?: number; kind?: 'Deployment' | 'StatefulSet'; timeoutMs?: number } = {},
): Promise<void> {
  return waitForHandback(kc, {
    kind: options.kind ?? 'Deployment',
    namespace,
    name: workload,
    replicas: options.replicas ?? 1,
    env: [{ container: 'app', name: 'SOURCE_QUEUE', value: source }],
    timeoutMs: options.timeoutMs,
  });
}

export async function publishTo(
  ch: amqp.ConfirmChannel,
  queue: string,
  ids: readonly string[],
  user?: string,
  /** Headers instead of the per-user one (e.g. W3C baggage). */
  headers?: Record<string, string>,
) {
  for (const id of ids) {
    ch.sendToQueue(queue, Buffer.from(messageBody(id)), {
      messageId: id,
      persistent: true,
      headers: headers ?? messageHeaders(user),
    });
  }
  await ch.waitForConfirms();
}

/** Ids starting with `prefix` the fixture app pods recorded processing (read from `source`, if given). */
export function appReceived(prefix: string, source?: string): Set<string> {
  return new Set(
    records(
      (r) =>
        r.event === 'message' && r.id.startsWith(prefix) && (source === undefined || r.source === source),
    ).map((r) => (r.event === 'message' ? r.id : '')),
  );
}

/**
 * Waits until the fixture app pods recorded every one of `expected` (ids starting with `prefix`,
 * read from `source` when given); `what` names the wait in its failure.
 */
export async function waitForAppReceived(
  what: string,
  expected: readonly string[],
  timeoutMs: number,
  prefix: string,
  source?: string,
): Promise<void> {
  await pollUntil(
    what,
    async () => appReceived(prefix, source),
    (got) => expected.every((id) => got.has(id)),
    timeoutMs,
  );
}

/** A developer's local consumer of `queue` (a session shadow): acks each message, pushes its id. */
export async function consumeQueueIds(
  conn: amqp.ChannelModel,
  queue: string,
  sink: string[],
): Promise<amqp.Channel> {
  const local = await conn.createChannel();
  await local.consume(queue, (m) => {
    if (!m) return;
    sink.push(String(m.properties.messageId));
    local.ack(m);
  });
  return local;
}

export const ids = (prefix: string, what: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${what}-${i}`);
