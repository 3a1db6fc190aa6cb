// The demo's sample service: one pod, two consumer containers — orders from a Kafka topic and
// invoices from a RabbitMQ queue — annotated for Queue Split, as a team would deploy it. The
// cluster suite deploys the same service (with its own names) for the mixed-provider split.
import type { V1Deployment } from '@kubernetes/client-node';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../core/podSecurity';
import { QUEUE_CONFIG_ANNOTATION } from '../core/queueConfig/schema';

// Names per run: a demo interrupted halfway never blocks the next one.
const run = Date.now().toString(36);
export const demoNamespace = `queuesplit-demo-${run}`;
export const workloadName = 'shop';
export const ordersTopic = `demo-orders-${run}`;
export const appGroup = `shop-orders-${run}`;
export const invoicesQueue = `demo-invoices-${run}`;

export const shopDeclaration = `queues:
  - name: orders
    container: orders-consumer
    kafka:
      brokersEnv: KAFKA_BROKERS
      sourceEnv: SOURCE_TOPIC
      groupEnv: KAFKA_GROUP
      offsetReset: earliest
  - name: invoices
    container: invoices-consumer
    rabbitmq:
      urlEnv: AMQP_URL
      managementUrlEnv: RABBITMQ_MANAGEMENT_URL
      sourceEnv: SOURCE_QUEUE
`;

export interface ShopNames {
  namespace: string;
  name: string;
  ordersTopic: string;
  appGroup: string;
  invoicesQueue: string;
  replicas?: number;
}

const demoNames: ShopNames = {
  namespace: demoNamespace,
  name: workloadName,
  ordersTopic,
  appGroup,
  invoicesQueue,
};

export function shopDeployment(
  env: { kafkaBrokers: string; amqpUrl: string; managementUrl: string },
  names: ShopNames = demoNames,
): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: names.name,
      namespace: names.namespace,
      annotations: { [QUEUE_CONFIG_ANNOTATION]: shopDeclaration },
    },
    spec: {
      replicas: names.replicas ?? 1,
      selector: { matchLabels: { app: names.name } },
      template: {
        metadata: { labels: { app: names.name } },
        spec: {
          terminationGracePeriodSeconds: 10,
          securityContext: restrictedPodSecurityContext,
          containers: [
            {
              name: 'orders-consumer',
              image: 'queuesplit/fixture-kafka-consumer:demo',
              securityContext: restrictedContainerSecurityContext,
              env: [
                { name: 'KAFKA_BROKERS', value: env.kafkaBrokers },
                { name: 'SOURCE_TOPIC', value: names.ordersTopic },
                { name: 'KAFKA_GROUP', value: names.appGroup },
              ],
            },
            {
              name: 'invoices-consumer',
              image: 'queuesplit/fixture-rabbitmq-consumer:demo',
              securityContext: restrictedContainerSecurityContext,
              env: [
                { name: 'AMQP_URL', value: env.amqpUrl },
                { name: 'RABBITMQ_MANAGEMENT_URL', value: env.managementUrl },
                { name: 'SOURCE_QUEUE', value: names.invoicesQueue },
              ],
            },
          ],
        },
      },
    },
  };
}
