// Every provider's queue-agent side, by provider: the one table the queue-agent dispatches on
// (adding a provider adds one line; the compiler asks for it once core/providers.ts lists it).
//
// A provider's module is required when a queue of that provider first needs it, not imported:
// a queue-agent then evaluates only the broker clients its workload names, and the controller
// (the same bundle) none of them. In the agent's bundle, evaluating all three providers added
// 12.5 MiB to a process's RSS and the RabbitMQ one alone 6.7 (2026-12-07, Node 20).
import type { AgentQueuePlan, AgentRoute, QueuePlanOf } from '../../core/agentProtocol';
import type { Provider } from '../../core/providers';
import type { Engine } from '../engine/contract';
import type { Logger } from '../log';
import type * as KafkaAgent from '../kafka/agentProvider';
import type * as RabbitAgent from '../rabbitmq/agentProvider';
import type * as SqsAgent from '../sqs/agentProvider';
import type { SessionReader } from '../sessionStream/reader';
import type { AgentProvider, CaTrust, EngineSettings, TestMessageSender } from './contract';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use, on purpose (above) */
const LOADERS: { readonly [P in Provider]: () => AgentProvider<P> } = {
  kafka: () => (require('../kafka/agentProvider') as typeof KafkaAgent).kafkaAgent,
  rabbitmq: () => (require('../rabbitmq/agentProvider') as typeof RabbitAgent).rabbitAgent,
  sqs: () => (require('../sqs/agentProvider') as typeof SqsAgent).sqsAgent,
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** How each provider's clients trust a private CA (CaTrust): data the controller needs without
 * loading a client. */
const CA_TRUST: { readonly [P in Provider]: CaTrust } = {
  // kafkajs takes the CA bundle per connection (agent/kafka/agentProvider.ts kafkaConnection).
  kafka: 'client',
  // AMQP and the management API (fetch) trust what Node trusts: NODE_EXTRA_CA_CERTS.
  rabbitmq: 'process',
  // The SDK's HTTPS client trusts what Node trusts: NODE_EXTRA_CA_CERTS.
  sqs: 'process',
};

const loaded: { [P in Provider]?: AgentProvider<P> } = {};

function agentProvider<P extends Provider>(provider: P): AgentProvider<P> {
  // The cache's key and value types correlate per provider; TypeScript cannot follow that through
  // an index with a type parameter.
  const cache = loaded as { [K in P]?: AgentProvider<P> };
  return (cache[provider] ??= LOADERS[provider]());
}

/** How the provider's clients trust a private CA. */
export function caTrust(provider: Provider): CaTrust {
  return CA_TRUST[provider];
}

/** A plan with the provider it is for, as one type parameter: what the table is indexed by. */
export type PlanFor<P extends Provider> = { readonly [K in Provider]: QueuePlanOf<K> }[P];

function buildEngine<P extends Provider>(
  provider: P,
  plan: PlanFor<P>,
  activationId: string,
  logger: Logger,
  settings: EngineSettings,
): Engine {
  return agentProvider(provider).engine(activationId, plan, logger, settings);
}

/** The engine for one logical queue, from the desired plan and the agent pod's env; names of
 * every shadow come from the plan. */
export function createEngine(
  activationId: string,
  plan: AgentQueuePlan,
  logger: Logger,
  settings: EngineSettings = {},
): Engine {
  return buildEngine(plan.provider, plan, activationId, logger, settings);
}

function buildReader<P extends Provider>(provider: P, plan: PlanFor<P>, route: AgentRoute): SessionReader {
  const shadow = route.shadows[plan.name];
  if (!shadow) throw new Error(`route ${route.routeId} has no session shadow for queue ${plan.name}`);
  return agentProvider(provider).sessionReader(plan, route, shadow);
}

/** A reader of the route's session shadow on the plan's queue. */
export function sessionReader(plan: AgentQueuePlan, route: AgentRoute): SessionReader {
  return buildReader(plan.provider, plan, route);
}

/** A new test-message sender for the provider (it opens its connections when first used). */
export function testMessageSender<P extends Provider>(provider: P): TestMessageSender<P> {
  return agentProvider(provider).testMessages();
}
