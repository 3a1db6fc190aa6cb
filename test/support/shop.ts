// The demo's sample service as a cluster-test subject: a fresh Kafka topic (its app group) and a
// fresh RabbitMQ queue, consumed by one Deployment whose queue-agent hosts both engines.
import { AppsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { shopDeployment } from '../../fixtures/shop';
import type { ClusterFixture } from './clusterFixture';
import { waitForHandback } from './handback';
import { createTopic } from './kafkaSplit';
import { waitForReadyPods } from './kube';
import { uniqueName } from './services';

export interface ShopSources {
  topic: string;
  group: string;
  queue: string;
}

/**
 * Creates the sources (named after `name`, the topic with `partitions`), deploys the service in
 * the namespace of a cluster fixture with RabbitMQ and Kafka, and waits for its pod.
 */
export async function deployShop(
  fx: Pick<ClusterFixture, 'kc' | 'services' | 'namespace' | 'ch' | 'kafka'>,
  name: string,
  partitions: number,
): Promise<ShopSources> {
  const { kc, services, namespace, ch, kafka } = fx;
  const sources = {
    topic: uniqueName(`${name}-orders`),
    group: uniqueName(`${name}-group`),
    queue: uniqueName(`${name}-invoices`),
  };
  await createTopic(kafka, sources.topic, partitions);
  await ch.assertQueue(sources.queue, { durable: true });
  await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace,
    body: shopDeployment(
      {
        kafkaBrokers: services.inCluster.kafkaBrokers.join(','),
        amqpUrl: services.inCluster.amqpUrl,
        managementUrl: services.inCluster.rabbitManagementUrl,
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

/** Waits until the service is handed back: both consumers on their own sources (handback.ts says how). */
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
    ],
    timeoutMs: options.timeoutMs,
  });
}
