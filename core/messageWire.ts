// What a session message is on the stream (core/sessionStream.ts) apart from its broker part:
// the fields every message has, and the bytes helpers every provider's wire codec
// (core/providers/<provider>/message.ts) uses. A leaf, so those codecs import it without a cycle
// through the provider table.
import { z } from 'zod';

/** Bytes as MessagePack decodes them. */
export const wireBytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'expected bytes');

/** One broker header as carried (core/shadowMessage.ts CarriedHeader): its value as its broker typed it. */
const carriedHeader = z.object({ name: z.string(), value: z.unknown() });

/** The fields of every session message, in the order v2 sends them (the broker part follows). */
export const wireBaseSchema = z.object({
  id: z.string(),
  body: wireBytes,
  /** Broker timestamp in ms since the epoch. */
  time: z.number(),
  contentType: z.string().optional(),
  headers: z.array(carriedHeader),
});
export type WireBase = z.infer<typeof wireBaseSchema>;

/** MessagePack's Uint8Array as a Buffer over the same bytes. */
export const asBuffer = (v: Uint8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** MessagePack returns bytes as Uint8Array; values that were Buffers are Buffers again, at any depth. */
export function withBuffers(value: unknown): unknown {
  if (value instanceof Uint8Array) return asBuffer(value);
  if (Array.isArray(value)) return value.map(withBuffers);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withBuffers(v)]));
  return value;
}
