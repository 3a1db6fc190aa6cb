// Builds a Kafka engine for one queue from the desired plan and the agent pod's env: brokers
// (and SASL credentials) from the env names the declaration gave, resource names from the plan.
import type { SASLOptions } from 'kafkajs';
import type { AgentQueuePlan } from '../../core/agentProtocol';
import type { Engine } from '../engine/contract';
import type { Logger } from '../engine/log';
import { KafkaEngine } from '../kafka/engine';
import { EngineConfigError } from './engineFactory';

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

export function createKafkaEngine(
  activationId: string,
  plan: AgentQueuePlan,
  brokers: string,
  logger: Logger,
): Engine {
  const { appShadowGroup, splitterGroup, transactionalId } = plan.names;
  if (!plan.group || !appShadowGroup || !splitterGroup || !transactionalId) {
    throw new EngineConfigError(`queue ${plan.name}: the plan lacks the Kafka group or resource names`);
  }
  const credentials = sasl(plan);
  return new KafkaEngine(
    {
      activationId,
      epoch: plan.epoch,
      connection: {
        brokers: brokers
          .split(',')
          .map((b) => b.trim())
          .filter(Boolean),
        // TLS with a private CA needs the mounted CA file; the agent does not mount one yet, so
        // only a TLS declaration without a CA Secret (system CAs) is supported here.
        ...(plan.tls ? { ssl: true } : {}),
        ...(credentials ? { sasl: credentials } : {}),
      },
      sourceTopic: plan.source,
      appGroup: plan.group,
      offsetReset: plan.offsetReset ?? 'earliest',
      appShadow: plan.names.appShadow,
      appShadowGroup,
      splitterGroup,
      transactionalId,
      clientLabel: plan.name,
    },
    { logger },
  );
}
