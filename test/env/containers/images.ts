// The brokers' images for the container backend: the official names, at the versions the process
// backend runs (Kafka and ElasticMQ from their poms, RabbitMQ from Debian 12's rabbitmq-server).
// A laptop's engine pulls them from Docker Hub; this project's own machines build them offline
// under the same names (./images/build.sh).
import { elasticMqVersion } from '../elasticmq';
import { kafkaVersion } from '../kafka';

/** Debian 12's rabbitmq-server, which the process backend runs (its version without the Debian
 * revision). build.sh refuses to build another one under this tag. */
export const rabbitMqVersion = '3.10.8';

export const brokerImages = {
  kafka: `apache/kafka:${kafkaVersion}`,
  rabbitmq: `rabbitmq:${rabbitMqVersion}-management`,
  // The JVM image (not elasticmq-native): the same server jar the process backend runs.
  elasticmq: `softwaremill/elasticmq:${elasticMqVersion}`,
} as const;
