// Every provider's core module, by provider: the one table the shared core files go through
// (declaration schema and rules, resolution, inventory, ownership, the plan, the session
// message). Adding a provider adds one line; the compiler asks for it once core/providers.ts
// lists the provider. The unions of the shared contracts (QueueDeclaration, ResolvedQueue,
// AgentQueuePlan, BrokerPart, WireMessage, …) are derived from the types of these modules, so
// adding a module extends them.
import { PROVIDER_NAMES, type Provider } from '../providers';
import type { BrokerSetting, CoreProvider, ProviderTypes } from './contract';
import { kafkaCore } from './kafka/provider';
import { rabbitCore } from './rabbitmq/provider';
import { sqsCore } from './sqs/provider';

const MODULES = {
  kafka: kafkaCore,
  rabbitmq: rabbitCore,
  sqs: sqsCore,
} as const satisfies { readonly [P in Provider]: { readonly provider: P } };

/** The types provider `P`'s module is made of (a union for a union of providers). */
export type ProviderTypesOf<P extends Provider> = {
  [K in Provider]: (typeof MODULES)[K] extends CoreProvider<infer T> ? T : never;
}[P];

/** Provider `P`'s core module. */
export type CoreProviderOf<P extends Provider> = CoreProvider<ProviderTypesOf<P>>;

/** The table, typed so that an entry's functions take its own provider's values. */
const CORE_PROVIDERS: { readonly [P in Provider]: CoreProviderOf<P> } = MODULES;

/** Provider `P`'s core module. */
export function coreProvider<P extends Provider>(provider: P): CoreProviderOf<P> {
  return CORE_PROVIDERS[provider];
}

/** Every provider's broker settings (flags of the controller, passed on to every queue-agent). */
export function brokerSettings(): BrokerSetting[] {
  return PROVIDER_NAMES.flatMap((provider) => [...CORE_PROVIDERS[provider].brokerSettings]);
}

/** `ProviderTypes` is what every module satisfies; exported for the contracts that build on it. */
export type { ProviderTypes };
