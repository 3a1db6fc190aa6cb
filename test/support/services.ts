// Loads the addresses `npm run env:up` wrote. Suites that need real services import this
// first; when the environment is not up they fail loudly with the fix, never skip.
import * as fs from 'node:fs';
import { envFile } from '../env/paths';
import { registerUrlCredentials } from './secrets';

export interface Services {
  kafkaBrokers: string[];
  amqpUrl: string;
  rabbitManagementUrl: string;
  /** Admin kubeconfig of the local control plane. */
  kubeconfig: string;
  /**
   * The same brokers as a workload's env names them: at the real node's gateway, reachable from
   * its pods (where queue-agents run) and, through node.sh's DNAT, from host processes too.
   * Needs the real node up (the full env:up).
   */
  inCluster: {
    kafkaBrokers: string[];
    amqpUrl: string;
    rabbitManagementUrl: string;
    /** The same brokers over TLS, signed by `brokerCaFile`. */
    kafkaTlsBrokers: string[];
    amqpsUrl: string;
    rabbitManagementTlsUrl: string;
  };
  /** The CA (PEM) that signed the brokers' TLS listeners (test/env/brokerTls.ts). */
  brokerCaFile: string;
  /** ElasticMQ, the environment's SQS (test/env/elasticmq.ts). */
  sqs: { endpoint: string; podEndpoint: string; region: string };
}

export function loadServices(): Services {
  if (!fs.existsSync(envFile)) {
    throw new Error(`The test environment is not up (${envFile} is missing). Run \`npm run env:up\` first.`);
  }
  for (const line of fs.readFileSync(envFile, 'utf8').split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) process.env[line.slice(0, eq)] ??= line.slice(eq + 1);
  }
  const need = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set in ${envFile}; rerun \`npm run env:up\`.`);
    return value;
  };
  const services = {
    kafkaBrokers: need('KAFKA_BROKERS').split(','),
    amqpUrl: need('AMQP_URL'),
    rabbitManagementUrl: need('RABBITMQ_MANAGEMENT_URL'),
    inCluster: {
      kafkaBrokers: need('KAFKA_POD_BROKERS').split(','),
      kafkaTlsBrokers: need('KAFKA_POD_TLS_BROKERS').split(','),
      amqpUrl: need('AMQP_POD_URL'),
      rabbitManagementUrl: need('RABBITMQ_POD_MANAGEMENT_URL'),
      amqpsUrl: need('AMQPS_POD_URL'),
      rabbitManagementTlsUrl: need('RABBITMQ_POD_MANAGEMENT_TLS_URL'),
    },
    brokerCaFile: need('BROKER_CA_FILE'),
    // Read when used: an environment brought up before SQS joined it has no ElasticMQ yet.
    get sqs(): Services['sqs'] {
      return {
        endpoint: need('SQS_ENDPOINT'),
        podEndpoint: need('SQS_POD_ENDPOINT'),
        region: need('SQS_REGION'),
      };
    },
    // Read when used: the broker suites run before the control plane is up (env:up --brokers).
    get kubeconfig(): string {
      const value = process.env.KUBECONFIG;
      if (!value)
        throw new Error(
          `KUBECONFIG is not set in ${envFile}: only the brokers are up (env:up --brokers); run \`npm run env:up\` for the control plane.`,
        );
      return value;
    },
  };
  // Every suite gets the broker credentials here, so the leak scan always knows them.
  registerUrlCredentials(services.amqpUrl, 'AMQP_URL');
  registerUrlCredentials(services.rabbitManagementUrl, 'RABBITMQ_MANAGEMENT_URL');
  registerUrlCredentials(services.inCluster.amqpUrl, 'AMQP_POD_URL');
  registerUrlCredentials(services.inCluster.rabbitManagementUrl, 'RABBITMQ_POD_MANAGEMENT_URL');
  return services;
}

/** A name no earlier run used, so reruns against a long-lived broker never see old data. */
export const uniqueName = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
