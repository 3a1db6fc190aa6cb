// A RabbitMQ consumer workload, annotated for Queue Split, as the cluster suites use it.
import * as amqp from 'amqplib';
import { AppsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import { asStatefulSet, fixtureDeployment, records, waitForReadyPods } from './kube';
import { createSecret, messageBody, messageHeaders } from './secrets';
import type { Services } from './services';

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
  const apps = kc.makeApiClient(AppsV1Api);
  if (kind === 'Deployment') await apps.createNamespacedDeployment({ namespace, body });
  else await apps.createNamespacedStatefulSet({ namespace, body: asStatefulSet(body) });
  await waitForReadyPods(kc, namespace, name, replicas);
}

export async function publishTo(
  ch: amqp.ConfirmChannel,
  queue: string,
  ids: readonly string[],
  user?: string,
) {
  for (const id of ids) {
    ch.sendToQueue(queue, Buffer.from(messageBody(id)), {
      messageId: id,
      persistent: true,
      headers: messageHeaders(user),
    });
  }
  await ch.waitForConfirms();
}

/** Ids the fixture app pods recorded processing. */
export function appReceived(prefix: string): Set<string> {
  return new Set(
    records((r) => r.event === 'message' && r.id.startsWith(prefix)).map((r) =>
      r.event === 'message' ? r.id : '',
    ),
  );
}

export const ids = (prefix: string, what: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${what}-${i}`);
