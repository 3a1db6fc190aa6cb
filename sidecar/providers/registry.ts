// Every provider's sidecar side, by provider: the one table the session goes through for the
// broker-transport consumer and relay delivery. Adding a provider adds one line; the compiler
// asks for it once core/providers.ts lists the provider.
import type { Provider } from '../../core/providers';
import type { SidecarProvider } from './contract';
import { kafkaSidecar } from './kafka';
import { rabbitSidecar } from './rabbitmq';
import { sqsSidecar } from './sqs';

const SIDECAR_PROVIDERS: { readonly [P in Provider]: SidecarProvider<P> } = {
  kafka: kafkaSidecar,
  rabbitmq: rabbitSidecar,
  sqs: sqsSidecar,
};

export function sidecarProvider<P extends Provider>(provider: P): SidecarProvider<P> {
  return SIDECAR_PROVIDERS[provider];
}
