// The RabbitMQ engine's checkpoint: what a restarted engine needs to continue where the last
// one stopped. Opaque to the controller; validated on the way back in.
import { z } from 'zod';
import type { HeaderFilter } from '../../core/filter';
import {
  ENGINE_PHASES,
  type Checkpoint,
  type EnginePhase,
  RetainedResource,
  RouteSpec,
} from '../engine/contract';
import type { SourceType } from './preflight';
import type { ShadowArguments } from './shadowArguments';

export const PROVIDER = 'rabbitmq';
const FORMAT = 1;

const phases = ENGINE_PHASES;

const stateSchema = z.object({
  activationId: z.string(),
  epoch: z.number(),
  sourceQueue: z.string(),
  appShadow: z.string(),
  lockQueue: z.string(),
  phase: z.enum(phases),
  sourceType: z.enum(['classic', 'quorum']).optional(),
  // Absent in checkpoints of agents that declared shadows with the type alone.
  shadowArguments: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  generation: z.number().int().nonnegative(),
  routes: z.array(
    z.object({ routeId: z.string(), filter: z.record(z.string(), z.string()), shadow: z.string() }),
  ),
  removed: z.array(z.object({ routeId: z.string(), shadow: z.string() })),
  retained: z.array(
    z.object({
      kind: z.literal('shadow'),
      name: z.string(),
      routeId: z.string().optional(),
      reason: z.string(),
      verifiedEmptyAt: z.string(),
    }),
  ),
});

export interface RabbitState {
  readonly activationId: string;
  readonly epoch: number;
  readonly sourceQueue: string;
  readonly appShadow: string;
  readonly lockQueue: string;
  readonly phase: EnginePhase;
  readonly sourceType?: SourceType;
  readonly shadowArguments?: ShadowArguments;
  readonly generation: number;
  readonly routes: readonly RouteSpec[];
  readonly removed: readonly { readonly routeId: string; readonly shadow: string }[];
  readonly retained: readonly RetainedResource[];
}

export function encodeCheckpoint(state: RabbitState): Checkpoint {
  const routes = state.routes.map((r) => ({ routeId: r.routeId, filter: { ...r.filter }, shadow: r.shadow }));
  const body = {
    ...state,
    routes,
    removed: state.removed.map((r) => ({ ...r })),
    retained: state.retained.map((r) => ({ ...r })),
  };
  // A JSON round trip drops `undefined` members, so what is persisted is what comes back.
  return { provider: PROVIDER, format: FORMAT, state: JSON.parse(JSON.stringify(body)) };
}

export function decodeCheckpoint(
  checkpoint: Checkpoint,
): { ok: true; state: RabbitState } | { ok: false; problem: string } {
  if (checkpoint.provider !== PROVIDER || checkpoint.format !== FORMAT) {
    return {
      ok: false,
      problem: `checkpoint is ${checkpoint.provider} format ${checkpoint.format}, not ${PROVIDER} format ${FORMAT}`,
    };
  }
  const parsed = stateSchema.safeParse(checkpoint.state);
  if (!parsed.success)
    return {
      ok: false,
      problem: `checkpoint does not parse: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    };
  const s = parsed.data;
  return {
    ok: true,
    state: { ...s, routes: s.routes.map((r) => ({ ...r, filter: r.filter as HeaderFilter })) },
  };
}
