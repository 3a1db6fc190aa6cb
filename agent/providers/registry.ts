// Every provider's queue-agent side, by provider: the one table the queue-agent dispatches on
// (adding a provider adds one line; the compiler asks for it once core/providers.ts lists it).
import type { AgentQueuePlan, AgentRoute, QueuePlanOf } from '../../core/agentProtocol';
import { PROVIDER_NAMES, type Provider } from '../../core/providers';
import type { Engine } from '../engine/contract';
import type { Logger } from '../log';
import { kafkaAgent } from '../kafka/agentProvider';
import { rabbitAgent } from '../rabbitmq/agentProvider';
import { sqsAgent } from '../sqs/agentProvider';
import type { SessionReader } from '../sessionStream/reader';
import type { AgentProvider, EngineSettings, TestMessageSender } from './contract';

const AGENT_PROVIDERS: { readonly [P in Provider]: AgentProvider<P> } = {
  kafka: kafkaAgent,
  rabbitmq: rabbitAgent,
  sqs: sqsAgent,
};

/** How the provider's clients trust a private CA (AgentProvider.caTrust). */
export function caTrust(provider: Provider): AgentProvider<Provider>['caTrust'] {
  return AGENT_PROVIDERS[provider].caTrust;
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
  return AGENT_PROVIDERS[provider].engine(activationId, plan, logger, settings);
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
  return AGENT_PROVIDERS[provider].sessionReader(plan, route, shadow);
}

/** A reader of the route's session shadow on the plan's queue. */
export function sessionReader(plan: AgentQueuePlan, route: AgentRoute): SessionReader {
  return buildReader(plan.provider, plan, route);
}

export type TestMessageSenders = { readonly [P in Provider]: TestMessageSender<P> };

/** One test-message sender per provider (each opens its connections when first used). */
export function testMessageSenders(): TestMessageSenders {
  // Object.fromEntries loses the correlation of each key with its value's type that the table has.
  return Object.fromEntries(
    PROVIDER_NAMES.map((provider) => [provider, AGENT_PROVIDERS[provider].testMessages()]),
  ) as unknown as TestMessageSenders;
}
