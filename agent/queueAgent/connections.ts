// A queue's broker connection from the desired plan and the agent pod's env: the pod env holds
// exactly the connection variables the workload's container has (copied as references by the
// controller, values resolved by the kubelet). The engines and the session readers
// (agent/session/) connect with these.
import * as fs from 'node:fs';
import type { SASLOptions } from 'kafkajs';
import type { AgentQueuePlan } from '../../core/agentProtocol';
import { plainHttpManagement, plainHttpManagementError } from '../../core/queueConfig/managementTransport';
import { formatFieldError } from '../../core/result';
import { caFilePath } from '../../core/tlsMount';
import type { KafkaConnection } from '../kafka/config';

/** A connection the pod's env cannot make: the split cannot run, whatever is retried. */
export class EngineConfigError extends Error {}

function envValue(name: string | undefined, what: string, queue: string): string {
  if (!name) throw new EngineConfigError(`queue ${queue}: the plan names no env var for ${what}`);
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new EngineConfigError(`queue ${queue}: env var ${name} (${what}) is empty in the queue-agent pod`);
  }
  return value;
}

/** A URL with the credentials of separate username/password env vars, when the plan has them. */
function withCredentials(url: string, plan: AgentQueuePlan): string {
  if (!plan.env.username && !plan.env.password) return url;
  const parsed = new URL(url);
  if (plan.env.username)
    parsed.username = encodeURIComponent(envValue(plan.env.username, 'username', plan.name));
  if (plan.env.password)
    parsed.password = encodeURIComponent(envValue(plan.env.password, 'password', plan.name));
  return parsed.toString();
}

export interface RabbitUrls {
  amqpUrl: string;
  managementUrl: string;
}

export function rabbitUrls(plan: AgentQueuePlan): RabbitUrls {
  const amqpUrl = withCredentials(envValue(plan.env.url, 'AMQP URL', plan.name), plan);
  const managementUrl = envValue(plan.env.managementUrl, 'management URL', plan.name);
  if (!plan.allowPlainHttpManagement && plainHttpManagement({ amqpUrl, managementUrl, tls: !!plan.tls })) {
    // The same rule as the controller's config check, on the values a Secret may have hidden from it.
    throw new EngineConfigError(
      `queue ${plan.name}: ${formatFieldError(plainHttpManagementError('rabbitmq', plan.env.url!, plan.env.managementUrl!))}`,
    );
  }
  return { amqpUrl, managementUrl };
}

function sasl(plan: AgentQueuePlan): SASLOptions | undefined {
  if (!plan.saslMechanism) return undefined;
  const username = process.env[plan.env.username ?? ''];
  const password = process.env[plan.env.password ?? ''];
  if (!username || !password) {
    throw new EngineConfigError(
      `queue ${plan.name}: SASL ${plan.saslMechanism} needs its username and password env vars`,
    );
  }
  const mechanism = plan.saslMechanism.toLowerCase();
  if (mechanism === 'plain') return { mechanism: 'plain', username, password };
  if (mechanism === 'scram-sha-256') return { mechanism: 'scram-sha-256', username, password };
  return { mechanism: 'scram-sha-512', username, password };
}

function readCa(file: string, queue: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new EngineConfigError(
      `queue ${queue}: the CA bundle ${file} is not mounted in the queue-agent pod (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
}

export function kafkaConnection(plan: AgentQueuePlan): KafkaConnection {
  const brokers = envValue(plan.env.brokers, 'brokers', plan.name);
  const credentials = sasl(plan);
  const caFile = caFilePath(plan.tls);
  return {
    brokers: brokers
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
    // A private CA is the Secret key the controller mounted (core/tlsMount.ts); without one
    // the system CAs are trusted.
    ...(plan.tls ? { ssl: caFile ? { ca: readCa(caFile, plan.name) } : true } : {}),
    ...(credentials ? { sasl: credentials } : {}),
  };
}
