// The SQS engine's checkpoint: what a restarted engine needs to continue where the last one
// stopped, including the copied-not-deleted ledger (ledger.ts). Opaque to the controller;
// validated on the way back in.
import { z } from 'zod';
import { checkpointCodec, filterSchema, phaseSchema, retainedSchema } from '../engine/checkpointCodec';
import type { EnginePhase, RetainedResource, RouteSpec } from '../engine/contract';
import type { LedgerRecord } from './ledger';

export const PROVIDER = 'sqs';
const FORMAT = 1;

const stateSchema = z.object({
  activationId: z.string(),
  epoch: z.number(),
  sourceQueueUrl: z.string(),
  appShadow: z.string(),
  lockQueue: z.string(),
  phase: phaseSchema,
  shadowAttributes: z.record(z.string(), z.string()).optional(),
  generation: z.number().int().nonnegative(),
  routes: z.array(z.object({ routeId: z.string(), filter: filterSchema, shadow: z.string() })),
  removed: z.array(z.object({ routeId: z.string(), shadow: z.string() })),
  retained: retainedSchema,
  ledger: z.array(
    z.object({
      messageId: z.string(),
      destination: z.string(),
      routeId: z.string().optional(),
      generation: z.number().int().nonnegative(),
      at: z.string(),
    }),
  ),
});

export interface SqsState {
  readonly activationId: string;
  readonly epoch: number;
  readonly sourceQueueUrl: string;
  readonly appShadow: string;
  readonly lockQueue: string;
  readonly phase: EnginePhase;
  /** The source attributes every shadow of this activation is created with (prepare). */
  readonly shadowAttributes?: Readonly<Record<string, string>>;
  readonly generation: number;
  readonly routes: readonly RouteSpec[];
  readonly removed: readonly { readonly routeId: string; readonly shadow: string }[];
  readonly retained: readonly RetainedResource[];
  readonly ledger: readonly LedgerRecord[];
}

export const sqsCheckpoints = checkpointCodec<SqsState>(PROVIDER, FORMAT, stateSchema, (state) => ({
  activationId: state.activationId,
  epoch: state.epoch,
  sourceQueueUrl: state.sourceQueueUrl,
  appShadow: state.appShadow,
  lockQueue: state.lockQueue,
  phase: state.phase,
  ...(state.shadowAttributes ? { shadowAttributes: { ...state.shadowAttributes } } : {}),
  generation: state.generation,
  routes: state.routes.map((r) => ({ routeId: r.routeId, filter: { ...r.filter }, shadow: r.shadow })),
  removed: state.removed.map((r) => ({ routeId: r.routeId, shadow: r.shadow })),
  retained: state.retained.map((r) => ({ ...r })),
  ledger: state.ledger.map((e) => ({ ...e })),
}));
