// The demo's sample service as a cluster-test subject: a fresh Kafka topic (its app group) and a
// fresh RabbitMQ queue, consumed by one Deployment whose queue-agent hosts both engines.
import { AppsV1Api, type KubeConfig } from '@kubernetes/client-node';
import type * as amqp from 'amqplib';
import type { Kafka } from 'kafkajs';
import { shopDeployment } from '../../fixtures/shop';
import type { ExpectedEnv } from './handback';
import { createTopic } from './kafkaSplit';
import { waitForReadyPods } from './kube';
import { loadServices, uniqueName } from './services';

export interface ShopSources {
  topic: string;
  group: string;
  queue: string;
}

/** Creates the sources (names from `prefix`), deploys the service and waits for its pod. */
export async function deployShop(options: {
  kc: KubeConfig;
  kafka: Kafka;
  ch: amqp.ConfirmChannel;
  namespace: string;
  name: string;
  prefix: string;
  partitions: number;
}): Promise<ShopSources> {
  const { kc, kafka, ch, namespace, name, prefix, partitions } = options;
  const services = loadServices();
  const sources = {
    topic: uniqueName(`${prefix}-orders`),
    group: uniqueName(`${prefix}-group`),
    queue: uniqueName(`${prefix}-invoices`),
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

/** The service's env as it was before any split: what a handback must restore. */
export const shopEnv = (s: ShopSources): ExpectedEnv[] => [
  { container: 'orders-consumer', name: 'SOURCE_TOPIC', value: s.topic },
  { container: 'orders-consumer', name: 'KAFKA_GROUP', value: s.group },
  { container: 'invoices-consumer', name: 'SOURCE_QUEUE', value: s.queue },
];
