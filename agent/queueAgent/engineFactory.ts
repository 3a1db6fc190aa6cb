// Builds the engine for one logical queue from the desired plan and the agent pod's env. The
// pod env holds exactly the connection variables the workload's container has (copied as
// references by the controller); names of every shadow come from the plan.
import type { AgentQueuePlan } from '../../core/agentProtocol';
import type { Engine } from '../engine/contract';
import type { Logger } from '../engine/log';
import type { RabbitTiming } from '../rabbitmq/config';
import { RabbitEngine } from '../rabbitmq/engine';
import { EngineConfigError, rabbitUrls } from './connections';
import { createKafkaEngine } from './kafkaEngineFactory';

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
    const { amqpUrl, managementUrl } = rabbitUrls(plan);
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
  return createKafkaEngine(activationId, plan, logger);
}
