// The parts of a queue plan's schema every provider shares: each provider's plan schema
// (core/providers/<provider>/plan.ts) is queuePlanSchema(its name, its env roles, its fields),
// and core/agentDocuments.ts puts them in the desired document's union.
import { z } from 'zod';
import type { Provider } from './providers';
import { tlsSchema } from './queueConfig/blocks';
import { WORKLOAD_PHASES } from './state/phases';

/** A broker name or source in a plan. */
export const planName = z.string().min(1).max(255);

export function queuePlanSchema<P extends Provider, R extends string, S extends z.ZodRawShape>(
  provider: P,
  roles: readonly R[],
  fields: S,
) {
  // Object.fromEntries cannot say that every role became a key; the mapped type says it.
  const env = Object.fromEntries(roles.map((role) => [role, z.string().optional()])) as {
    [K in R]: z.ZodOptional<z.ZodString>;
  };
  return z.object({
    name: z.string().min(1).max(63),
    source: planName,
    tls: tlsSchema.optional(),
    env: z.object(env),
    epoch: z.int().min(0),
    step: z.enum(WORKLOAD_PHASES).optional(),
    handoff: z.unknown().optional(),
    checkpoint: z.unknown().optional(),
    provider: z.literal(provider),
    ...fields,
  });
}

/** The env entries a plan names, by role (a dependency is copied, not named). */
export function planEnv<R extends string>(
  env: readonly { name: string; role: R | 'dependency' }[],
): { [K in R]?: string } {
  return Object.fromEntries(env.filter((e) => e.role !== 'dependency').map((e) => [e.role, e.name])) as {
    [K in R]?: string;
  };
}
