// The real node's pod network as the rest of the environment sees it (./README.md, "Networking").
// node.sh derives the same gateway from QS_REAL_NODE_SUBNET; the brokers' pod-facing addresses
// are built here so that Kafka can advertise one before the node exists.

const subnet = process.env.QS_REAL_NODE_SUBNET ?? '10.213.0.0/24';
const match = /^(\d+\.\d+\.\d+)\.0\/24$/.exec(subnet);
if (!match) throw new Error(`QS_REAL_NODE_SUBNET must be a /24 like 10.213.0.0/24, got ${subnet}`);

/** The bridge's address: the node's InternalIP, and where pods reach the host's services. */
export const podGateway = `${match[1]}.1`;

/**
 * Ports on the gateway that node.sh forwards to a loopback service (for pods, and for host
 * processes too, so one address works in a workload's env wherever its pod runs). Kafka's is a
 * listener of its own, advertised on the gateway (test/env/kafka.ts).
 */
export const gatewayPorts = {
  kafka: 19094,
  kafkaTls: 19095,
  amqp: 5672,
  rabbitManagement: 15672,
  amqps: 5671,
  rabbitManagementTls: 15671,
  /** ElasticMQ, the environment's SQS (test/env/elasticmq.ts). */
  sqs: 9324,
} as const;
