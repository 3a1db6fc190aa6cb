// Builds a Kafka engine for one queue from the desired plan: its connection from the agent pod's
// env (./connections.ts), resource names from the plan.
import type { AgentQueuePlan } from '../../core/agentProtocol';
import type { Engine } from '../engine/contract';
import type { Logger } from '../engine/log';
import { KafkaEngine } from '../kafka/engine';
import { EngineConfigError, kafkaConnection } from './connections';

export function createKafkaEngine(activationId: string, plan: AgentQueuePlan, logger: Logger): Engine {
  const { appShadowGroup, splitterGroup, transactionalId } = plan.names;
  if (!plan.group || !appShadowGroup || !splitterGroup || !transactionalId) {
    throw new EngineConfigError(`queue ${plan.name}: the plan lacks the Kafka group or resource names`);
  }
  return new KafkaEngine(
    {
      activationId,
      epoch: plan.epoch,
      connection: kafkaConnection(plan),
      sourceTopic: plan.source,
      appGroup: plan.group,
      offsetReset: plan.offsetReset ?? 'earliest',
      isolationLevel: plan.isolationLevel ?? 'read_committed',
      appShadow: plan.names.appShadow,
      appShadowGroup,
      splitterGroup,
      transactionalId,
      clientLabel: plan.name,
    },
    { logger },
  );
}
