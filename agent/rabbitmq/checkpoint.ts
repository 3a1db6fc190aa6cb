// The RabbitMQ engine's checkpoint: what a restarted engine needs to continue where the last
// one stopped. Opaque to the controller; validated on the way back in.
import { z } from 'zod';
import { checkpointCodec, filterSchema, phaseSchema, retainedSchema } from '../engine/checkpointCodec';
import type { EnginePhase, RetainedResource, RouteSpec } from '../engine/contract';
import type { SourceType } from './sourceCheck';
import type { ShadowArguments } from './shadowArguments';

export const PROVIDER = 'rabbitmq';
const FORMAT = 1;

const stateSchema = z.object({
  activationId: z.string(),
  epoch: z.number(),
  sourceQueue: z.string(),
  appShadow: z.string(),
  lockQueue: z.string(),
  phase: phaseSchema,
  sourceType: z.enum(['classic', 'quorum']).optional(),
  // Absent in checkpoints of agents that declared shadows with the type alone.
  shadowArguments: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  generation: z.number().int().nonnegative(),
  routes: z.array(z.object({ routeId: z.string(), filter: filterSchema, shadow: z.string() })),
  removed: z.array(z.object({ routeId: z.string(), shadow: z.string() })),
  retained: retainedSchema,
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

export const rabbitCheckpoints = checkpointCodec<RabbitState>(PROVIDER, FORMAT, stateSchema, (state) => ({
  ...state,
  routes: state.routes.map((r) => ({ routeId: r.routeId, filter: { ...r.filter }, shadow: r.shadow })),
  removed: state.removed.map((r) => ({ ...r })),
  retained: state.retained.map((r) => ({ ...r })),
}));
