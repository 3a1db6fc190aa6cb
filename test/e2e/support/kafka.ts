// The Kafka side of the e2e suites: a throwaway namespace with an annotated Kafka consumer
// (queuesplit/fixture-kafka-consumer, an image on the real test node), topics per run,
// and a reader that returns every record of a topic with its headers, to check what arrived.
import { createTopicWithLeaders } from '../../support/kafkaSplit';
import { Kafka, logLevel } from 'kafkajs';
import type { KubeConfig } from '@kubernetes/client-node';
import { AppsV1Api } from '@kubernetes/client-node';
import { QUEUE_CONFIG_ANNOTATION } from '../../../core/queueConfig/schema';
import {
  adminConfig,
  createNamespace,
  deleteNamespace,
  fixtureDeployment,
  waitForReadyPods,
} from '../../support/kube';
import { pollUntil } from '../../support/poll';
import { loadServices, uniqueName, type Services } from '../../support/services';
import { splitNamesIn } from './cluster';

export const kafkaDeclaration = [
  'queues:',
  '  - name: orders',
  '    kafka:',
  '      brokersEnv: KAFKA_BROKERS',
  '      sourceEnv: SOURCE_TOPIC',
  '      groupEnv: KAFKA_GROUP',
  '      offsetReset: earliest',
].join('\n');

export interface KafkaRecord {
  value: string;
  headers: Record<string, string>;
  partition: number;
}

export interface KafkaFixture {
  services: Services;
  admin: KubeConfig;
  kafka: Kafka;
  namespace: string;
  workload: string;
  /** The topic the workload consumes (its source). */
  source: string;
  owner: string;
  createTopic(topic: string): Promise<void>;
  /** Every record of `topic` so far, read from the beginning, once `accept` likes them. */
  readTopic(
    topic: string,
    accept: (records: KafkaRecord[]) => boolean,
    timeoutMs?: number,
  ): Promise<KafkaRecord[]>;
  splits(): Promise<string[]>;
  waitForNoSplits(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function headerText(value: unknown): string {
  const last: unknown = Array.isArray(value) ? value[value.length - 1] : value;
  return Buffer.isBuffer(last) ? last.toString('utf8') : String(last);
}

export async function prepareKafkaFixture(prefix: string): Promise<KafkaFixture> {
  const services = loadServices();
  const admin = adminConfig(services.kubeconfig);
  const kafka = new Kafka({ clientId: 'qs-e2e', brokers: services.kafkaBrokers, logLevel: logLevel.NOTHING });
  const createTopic = (topic: string) => createTopicWithLeaders(kafka, { topic, numPartitions: 1 });
  const namespace = await createNamespace(admin, prefix);
  const workload = 'payments-app';
  const source = uniqueName(`${prefix}-orders`);
  try {
    await createTopic(source);
    await admin.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace,
      body: fixtureDeployment({
        name: workload,
        image: 'queuesplit/fixture-kafka-consumer',
        replicas: 1,
        annotations: { [QUEUE_CONFIG_ANNOTATION]: kafkaDeclaration },
        env: [
          { name: 'KAFKA_BROKERS', value: services.inCluster.kafkaBrokers.join(',') },
          { name: 'SOURCE_TOPIC', value: source },
          { name: 'KAFKA_GROUP', value: `${source}-app` },
        ],
      }),
    });
    await waitForReadyPods(admin, namespace, workload, 1);
  } catch (err) {
    await deleteNamespace(admin, namespace);
    throw err;
  }
  const readTopic = async (
    topic: string,
    accept: (records: KafkaRecord[]) => boolean,
    timeoutMs = 60_000,
  ): Promise<KafkaRecord[]> => {
    const records: KafkaRecord[] = [];
    const consumer = kafka.consumer({ groupId: uniqueName('qs-e2e-reader') });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message, partition }) => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = headerText(v);
          records.push({ value: message.value?.toString('utf8') ?? '', headers, partition });
        },
      });
      return await pollUntil(`records of ${topic}`, async () => [...records], accept, timeoutMs);
    } finally {
      await consumer.disconnect().catch(() => undefined);
    }
  };
  return {
    services,
    admin,
    kafka,
    namespace,
    workload,
    source,
    owner: uniqueName('e2e').replace(/[^a-z0-9-]/g, ''),
    createTopic,
    readTopic,
    splits: () => splitNamesIn(admin, namespace),
    waitForNoSplits: async (timeoutMs = 240_000) => {
      await pollUntil(
        `no QueueSplits left in ${namespace}`,
        () => splitNamesIn(admin, namespace),
        (names) => names.length === 0,
        timeoutMs,
      );
    },
    close: () => deleteNamespace(admin, namespace),
  };
}
