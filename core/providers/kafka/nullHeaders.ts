// kafkajs 2.2.4 cannot send a header whose value is null (legal in Kafka; the Java client's
// `new RecordHeader(k, null)`): its record encoder sizes every header value with
// `Buffer.byteLength`, which throws on null, although the writer itself encodes null as length
// -1. Copies must keep such headers (agent/kafka/DECISIONS.md, "Null header values"). The extension is the narrowest one that works: a copy carries one sentinel buffer
// (zero bytes long, so the size kafkajs computes is right: varint 0 and varint -1 are both one
// byte) in place of null, and the encoder writes that exact object as null. Any other value,
// including a real empty header value, is encoded by kafkajs unchanged.
import Encoder from 'kafkajs/src/protocol/encoder';

/** Stands for a null header value in a record handed to kafkajs. Compared by identity. */
export const NULL_HEADER_VALUE: Buffer = Buffer.alloc(0);

const proto = Encoder.prototype as {
  writeVarIntBytes(value: unknown): unknown;
  writeVarInt(n: number): unknown;
};
// Wrapped once per load of this module; each load checks its own sentinel, so two copies of
// it (a bundle and a test runner) would chain correctly.
const original = proto.writeVarIntBytes;
proto.writeVarIntBytes = function (this: typeof proto, value: unknown) {
  return value === NULL_HEADER_VALUE ? this.writeVarInt(-1) : original.call(this, value);
};

type SendableValue = Buffer | string;

/** Headers as kafkajs can send them: a null value (kafkajs decodes one as `null`, whatever its
 * types say) travels as the sentinel above; repeated keys stay arrays, in order. */
export function sendableHeaders(
  headers: Readonly<Record<string, SendableValue | null | undefined | readonly (SendableValue | null)[]>>,
): Record<string, SendableValue | SendableValue[]> {
  const one = (v: SendableValue | null): SendableValue => v ?? NULL_HEADER_VALUE;
  const out: Record<string, SendableValue | SendableValue[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.map(one) : one(v as SendableValue | null);
  }
  return out;
}
