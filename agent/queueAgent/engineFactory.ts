// Builds the engine for one logical queue from the desired plan and the agent pod's env. The
// pod env holds exactly the connection variables the workload's container has (copied as
// references by the controller); names of every shadow come from the plan.
import type { AgentQueuePlan } from '../../core/agentProtocol';
import { plainHttpManagement, plainHttpManagementError } from '../../core/queueConfig/managementTransport';
import { formatFieldError } from '../../core/result';
import type { Engine } from '../engine/contract';
import type { Logger } from '../engine/log';
import type { RabbitTiming } from '../rabbitmq/config';
import { RabbitEngine } from '../rabbitmq/engine';
import { createKafkaEngine } from './kafkaEngineFactory';

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

/** What the controller tells every queue-agent about the brokers (agent/main.ts flags). */
export interface EngineSettings {
  rabbitTiming?: Partial<RabbitTiming>;
}

export function createEngine(
  activationId: string,
  plan: AgentQueuePlan,
  logger: Logger,
  settings: EngineSettings = {},
): Engine {
  if (plan.provider === 'rabbitmq') {
    const amqpUrl = withCredentials(envValue(plan.env.url, 'AMQP URL', plan.name), plan);
    const managementUrl = envValue(plan.env.managementUrl, 'management URL', plan.name);
    if (!plan.allowPlainHttpManagement && plainHttpManagement({ amqpUrl, managementUrl, tls: !!plan.tls })) {
      // The same rule as the controller's config check, on the values a Secret may have hidden from it.
      throw new EngineConfigError(
        `queue ${plan.name}: ${formatFieldError(plainHttpManagementError('rabbitmq', plan.env.url!, plan.env.managementUrl!))}`,
      );
    }
    if (!plan.names.lockQueue)
      throw new EngineConfigError(`queue ${plan.name}: the plan has no lock queue name`);
    return new RabbitEngine(
      {
        activationId,
        epoch: plan.epoch,
        amqpUrl,
        managementUrl,
        sourceQueue: plan.source,
        appShadow: plan.names.appShadow,
        lockQueue: plan.names.lockQueue,
        connectionLabel: plan.name,
        ...(settings.rabbitTiming ? { timing: settings.rabbitTiming } : {}),
      },
      { logger },
    );
  }
  return createKafkaEngine(activationId, plan, envValue(plan.env.brokers, 'brokers', plan.name), logger);
}
