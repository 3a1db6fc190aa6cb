// The `telepresence.io/queue-config` annotation (docs/design.md §3) as a zod schema: the single source of
// its TypeScript types, its JSON Schema (deploy/schema/) and the schema stage of validation.
// Objects are strict: a typo such as `brokerEnv` must fail, not silently drop a setting. A queue
// entry holds exactly one provider block under the provider's name; each block's schema is its
// provider's (core/providers/<provider>/declaration.ts).
import { z } from 'zod';
import { PROVIDER_NAMES, type Provider } from '../providers';
import { coreProvider, type ProviderTypesOf } from '../providers/registry';
import { patterned } from './blocks';

export { PATTERNS } from './blocks';

export const QUEUE_CONFIG_ANNOTATION = 'telepresence.io/queue-config';

export const MAX_QUEUES = 32;

const queueName = patterned(
  'queueName',
  63,
  'Logical name, unique in the workload; the only name users type.',
);
const containerName = patterned(
  'containerName',
  63,
  'Container that consumes the queue; required unless the pod has exactly one container.',
).optional();

/** The declaration block of provider `P`. */
export type BlockOf<P extends Provider> = ProviderTypesOf<P>['block'];

/** A queue entry on provider `P`: its name, container and the provider's block. */
export type QueueDeclarationOf<P extends Provider> = {
  [K in P]: { name: string; container?: string } & { [B in K]: BlockOf<K> };
}[P];

export type QueueDeclaration = QueueDeclarationOf<Provider>;

export interface QueueConfig {
  queues: QueueDeclaration[];
}

function buildQueueSchema<P extends Provider>(provider: P): z.ZodType<QueueDeclarationOf<P>> {
  // A computed key loses its literal type in the object zod infers; the declared type says it.
  return z.strictObject({
    name: queueName,
    container: containerName,
    [provider]: coreProvider(provider).blockSchema,
  }) as unknown as z.ZodType<QueueDeclarationOf<P>>;
}

const QUEUE_SCHEMAS = new Map(PROVIDER_NAMES.map((provider) => [provider, buildQueueSchema(provider)]));

/** The schema of a queue entry on `provider`. */
export function queueSchemaOf<P extends Provider>(provider: P): z.ZodType<QueueDeclarationOf<P>> {
  // The map holds each provider's own schema under its name.
  return QUEUE_SCHEMAS.get(provider) as z.ZodType<QueueDeclarationOf<P>>;
}

export const queueConfigSchema = z
  .strictObject({
    queues: z
      .array(z.union([...QUEUE_SCHEMAS.values()]))
      .min(1)
      .max(MAX_QUEUES)
      .describe('The queues the workload consumes, each with exactly one provider block.'),
  })
  .describe(`Value of the ${QUEUE_CONFIG_ANNOTATION} annotation on a Deployment or StatefulSet.`);

/** A declared queue's one provider block, with the provider it names. */
export type DeclaredBlock = { [P in Provider]: { provider: P; block: BlockOf<P> } }[Provider];

export function declaredBlock(queue: QueueDeclaration): DeclaredBlock {
  // The schema allows exactly one provider block; its key is the provider.
  const provider = PROVIDER_NAMES.find((name) => Object.hasOwn(queue, name));
  if (provider === undefined) throw new Error(`queue ${queue.name} declares no provider block`);
  // The key found is the provider whose block the entry holds.
  const block = (queue as Partial<Record<Provider, BlockOf<Provider>>>)[provider];
  return { provider, block } as DeclaredBlock;
}

export function providerOf(queue: QueueDeclaration): Provider {
  return declaredBlock(queue).provider;
}
