// A message's broker part when it is the given provider's (core/shadowMessage.ts
// ShadowMessage.broker), so an assertion reads it as `partOf(m, 'kafka')?.key`.
import type { Provider } from '../../core/providers';
import type { BrokerPartOf, ShadowMessage } from '../../core/shadowMessage';

export function partOf<P extends Provider>(message: ShadowMessage, provider: P): BrokerPartOf<P> | undefined {
  // The discriminant says the part is provider P's; TypeScript cannot narrow a union by a type parameter.
  return message.broker.provider === provider ? (message.broker as BrokerPartOf<P>) : undefined;
}
