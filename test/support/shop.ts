// The demo's sample service as a cluster-test subject: a fresh Kafka topic (its app group), a
// fresh RabbitMQ queue and, when asked, a fresh SQS queue, consumed by one Deployment whose
// queue-agent hosts every engine.
import { CreateQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { AppsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { shopDeployment } from '../../fixtures/shop';
import type { ClusterFixture } from './clusterFixture';
import { waitForHandback } from './handback';
import { createTopic } from './kafkaSplit';
import { waitForReadyPods } from './kube';
import { createSecret } from './secrets';
import { sqsQueueUrls, type SqsQueueUrls } from './sqs';
import { uniqueName } from './services';

export interface ShopSources {
  topic: string;
  group: string;
  queue: string;
  /** The payments queue on SQS, when deployed with one. */
  payments?: SqsQueueUrls;
}

/**
 * Creates the sources (named after `name`, the topic with `partitions`), deploys the service in
 * the namespace of a cluster fixture with RabbitMQ and Kafka, and waits for its pod.
 */
export async function deployShop(
  fx: Pick<ClusterFixture, 'kc' | 'services' | 'namespace' | 'ch' | 'kafka'>,
  name: string,
  partitions: number,
  options: { sqs?: SQSClient } = {},
): Promise<ShopSources> {
  const { kc, services, namespace, ch, kafka } = fx;
  const sources: ShopSources = {
    topic: uniqueName(`${name}-orders`),
    group: uniqueName(`${name}-group`),
    queue: uniqueName(`${name}-invoices`),
  };
  await createTopic(kafka, sources.topic, partitions);
  await ch.assertQueue(sources.queue, { durable: true });
  if (options.sqs) {
    sources.payments = sqsQueueUrls(services.sqs, uniqueName(`${name}-payments`));
    // A short visibility timeout keeps the engine's proofs (one visibility timeout long) short.
    await options.sqs.send(
      new CreateQueueCommand({ QueueName: sources.payments.name, Attributes: { VisibilityTimeout: '5' } }),
    );
    await createSecret(kc, namespace, 'shop-aws', { id: 'qs-shop-key-id', secret: 'qs-shop-secret-key' });
  }
  await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace,
    body: shopDeployment(
      {
        kafkaBrokers: services.inCluster.kafkaBrokers.join(','),
        amqpUrl: services.inCluster.amqpUrl,
        managementUrl: services.inCluster.rabbitManagementUrl,
        ...(sources.payments
          ? {
              payments: {
                queueUrl: sources.payments.podUrl,
                endpoint: services.sqs.podEndpoint,
                region: services.sqs.region,
                secretName: 'shop-aws',
              },
            }
          : {}),
      },
      {
        namespace,
        name,
        ordersTopic: sources.topic,
        appGroup: sources.group,
        invoicesQueue: sources.queue,
      },
    ),
  });
  await waitForReadyPods(kc, namespace, name, 1);
  return sources;
}

/** Waits until the service is handed back: every consumer on its own source (handback.ts says how). */
export function waitForShopHandback(
  kc: KubeConfig,
  namespace: string,
  name: string,
  sources: ShopSources,
  options: { replicas?: number; timeoutMs?: number } = {},
): Promise<void> {
  return waitForHandback(kc, {
    kind: 'Deployment',
    namespace,
    name,
    replicas: options.replicas ?? 1,
    env: [
      { container: 'orders-consumer', name: 'SOURCE_TOPIC', value: sources.topic },
      { container: 'orders-consumer', name: 'KAFKA_GROUP', value: sources.group },
      { container: 'invoices-consumer', name: 'SOURCE_QUEUE', value: sources.queue },
      ...(sources.payments
        ? [{ container: 'payments-consumer', name: 'QUEUE_URL', value: sources.payments.podUrl }]
        : []),
    ],
    timeoutMs: options.timeoutMs,
  });
}
