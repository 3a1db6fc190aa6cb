// The Kafka engine's checkpoint: what a restarted engine needs to continue where the last one
// stopped. Offsets that change with every record (the splitter's, the drain's) live in the
// broker's groups, not here; the checkpoint keeps the seed (for the rollback) and the
// frontier (for the handback). Opaque to the controller; validated on the way back in.
import { z } from 'zod';
import { checkpointCodec, filterSchema, phaseSchema, retainedSchema } from '../engine/checkpointCodec';
import type { EnginePhase, RetainedResource, RouteSpec } from '../engine/contract';

export const PROVIDER = 'kafka';
const FORMAT = 1;

const offsetList = z.array(z.object({ partition: z.number().int().nonnegative(), offset: z.string() }));
const route = z.object({
  routeId: z.string(),
  filter: filterSchema,
  shadow: z.string(),
  sessionGroup: z.string(),
  drainGroup: z.string(),
});

const stateSchema = z.object({
  activationId: z.string(),
  epoch: z.number(),
  sourceTopic: z.string(),
  appGroup: z.string(),
  appShadow: z.string(),
  appShadowGroup: z.string(),
  splitterGroup: z.string(),
  transactionalId: z.string(),
  phase: phaseSchema,
  partitions: z.number().int().nonnegative(),
  generation: z.number().int().nonnegative(),
  routes: z.array(route),
  removed: z.array(route.omit({ filter: true })),
  retained: retainedSchema,
  seed: offsetList.nullable(),
  frontier: offsetList.nullable(),
});

export interface KafkaRoute extends RouteSpec {
  readonly sessionGroup: string;
  readonly drainGroup: string;
}

export interface RemovedRoute {
  readonly routeId: string;
  readonly shadow: string;
  readonly sessionGroup: string;
  readonly drainGroup: string;
}

export type OffsetList = readonly { readonly partition: number; readonly offset: string }[];

export interface KafkaState {
  readonly activationId: string;
  readonly epoch: number;
  readonly sourceTopic: string;
  readonly appGroup: string;
  readonly appShadow: string;
  readonly appShadowGroup: string;
  readonly splitterGroup: string;
  readonly transactionalId: string;
  readonly phase: EnginePhase;
  /** Source partitions the split accepted (shadows have as many). */
  readonly partitions: number;
  readonly generation: number;
  readonly routes: readonly KafkaRoute[];
  readonly removed: readonly RemovedRoute[];
  readonly retained: readonly RetainedResource[];
  /** Where the application group stood when the pump started (offsetReset applied). */
  readonly seed: OffsetList | null;
  /** Where the pump stopped: the handback position. */
  readonly frontier: OffsetList | null;
}

export const toList = (offsets: ReadonlyMap<number, string>): OffsetList =>
  [...offsets].sort(([a], [b]) => a - b).map(([partition, offset]) => ({ partition, offset }));

export const toMap = (list: OffsetList): Map<number, string> =>
  new Map(list.map((o) => [o.partition, o.offset]));

export const kafkaCheckpoints = checkpointCodec<KafkaState>(PROVIDER, FORMAT, stateSchema, (state) => ({
  ...state,
  routes: state.routes.map((r) => ({
    routeId: r.routeId,
    filter: { ...r.filter },
    shadow: r.shadow,
    sessionGroup: r.sessionGroup,
    drainGroup: r.drainGroup,
  })),
}));
