// Every provider's laptop side, by provider: the one table the extension and the sidecar go
// through for broker connections, the env-delivery reach check and direct test messages. Adding
// a provider adds one line; the compiler asks for it once core/providers.ts lists the provider.
import type { Provider } from '../../core/providers';
import { kafkaLaptop } from '../kafka';
import { rabbitLaptop } from '../rabbitmq';
import { sqsLaptop } from '../sqs';
import type { ConnectionBase, LaptopProvider } from './contract';

const MODULES = {
  kafka: kafkaLaptop,
  rabbitmq: rabbitLaptop,
  sqs: sqsLaptop,
} as const satisfies { readonly [P in Provider]: { readonly provider: P } };

/** The connection of provider `P` (a union for a union of providers). */
export type ConnectionOf<P extends Provider> = {
  [K in Provider]: (typeof MODULES)[K] extends LaptopProvider<K, infer C> ? C : never;
}[P];

/** A connection of any provider. */
export type BrokerConnection = ConnectionOf<Provider>;

/** Provider `P`'s laptop side. */
export type LaptopProviderOf<P extends Provider> = LaptopProvider<P, ConnectionOf<P> & ConnectionBase<P>>;

/** The table, typed so that an entry's functions take its own provider's values. */
const LAPTOP_PROVIDERS: { readonly [P in Provider]: LaptopProviderOf<P> } = MODULES;

export function laptopProvider<P extends Provider>(provider: P): LaptopProviderOf<P> {
  return LAPTOP_PROVIDERS[provider];
}
