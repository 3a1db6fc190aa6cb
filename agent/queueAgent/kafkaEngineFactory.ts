// Builds a Kafka engine for one queue from the desired plan and the agent pod's env: brokers
// (and SASL credentials) from the env names the declaration gave, resource names from the plan.
import * as fs from 'node:fs';
import type { SASLOptions } from 'kafkajs';
import type { AgentQueuePlan } from '../../core/agentProtocol';
import type { Engine } from '../engine/contract';
import type { Logger } from '../engine/log';
import { KafkaEngine } from '../kafka/engine';
import { caFilePath } from '../../core/tlsMount';
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

function readCa(file: string, queue: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new EngineConfigError(
      `queue ${queue}: the CA bundle ${file} is not mounted in the queue-agent pod (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
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
  const caFile = caFilePath(plan.tls);
  return new KafkaEngine(
    {
      activationId,
      epoch: plan.epoch,
      connection: {
        brokers: brokers
          .split(',')
          .map((b) => b.trim())
          .filter(Boolean),
        // A private CA is the Secret key the controller mounted (core/tlsMount.ts); without one
        // the system CAs are trusted.
        ...(plan.tls ? { ssl: caFile ? { ca: readCa(caFile, plan.name) } : true } : {}),
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
