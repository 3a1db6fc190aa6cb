// The envelope of every engine checkpoint: `{ provider, format, state }`, the state validated on
// the way back in. A provider declares its state's schema (with the pieces below, which the
// kernel's part of the state shares) and keeps its own field order: what it writes is what an
// agent of the next version reads back.
import { z } from 'zod';
import { ENGINE_PHASES, type Checkpoint } from './contract';

export const phaseSchema = z.enum(ENGINE_PHASES);

export { routeFilterSchema as filterSchema } from '../../core/filter/schema';

export const retainedSchema = z.array(
  z.object({
    kind: z.literal('shadow'),
    name: z.string(),
    routeId: z.string().optional(),
    reason: z.string(),
    verifiedEmptyAt: z.string(),
  }),
);

/** A checkpoint read back: its state, or why it is not one of this format. */
export type Decoded<S> = { ok: true; state: S } | { ok: false; problem: string };

export interface CheckpointCodec<S> {
  encode(state: S): Checkpoint;
  decode(checkpoint: Checkpoint): Decoded<S>;
}

export function checkpointCodec<S>(
  provider: string,
  format: number,
  schema: z.ZodType<S>,
  /** The exact JSON body written for a state (its field order is the format's). */
  body: (state: S) => unknown,
): CheckpointCodec<S> {
  return {
    encode: (state) => ({
      provider,
      format,
      // A JSON round trip drops `undefined` members, so what is persisted is what comes back.
      state: JSON.parse(JSON.stringify(body(state))),
    }),
    decode: (checkpoint) => {
      if (checkpoint.provider !== provider || checkpoint.format !== format) {
        return {
          ok: false,
          problem: `checkpoint is ${checkpoint.provider} format ${checkpoint.format}, not ${provider} format ${format}`,
        };
      }
      const parsed = schema.safeParse(checkpoint.state);
      if (!parsed.success) {
        return {
          ok: false,
          problem: `checkpoint does not parse: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
        };
      }
      return { ok: true, state: parsed.data };
    },
  };
}
