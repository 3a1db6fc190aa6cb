// The Kafka engine arrives with its own issue; until it is wired here the agent refuses Kafka
// queues with a clear reason instead of pretending to split them.
import type { AgentQueuePlan } from '../../core/agentProtocol';
import type { Engine } from '../engine/contract';
import type { Logger } from '../engine/log';
import { EngineConfigError } from './engineFactory';

export function createKafkaEngine(
  _activationId: string,
  plan: AgentQueuePlan,
  _brokers: string,
  _logger: Logger,
): Engine {
  throw new EngineConfigError(`queue ${plan.name}: this queue-agent build has no Kafka engine`);
}
