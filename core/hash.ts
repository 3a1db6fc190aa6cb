// Short, deterministic, DNS-safe digests for resource names and ownership keys.
import { createHash } from 'node:crypto';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * `length` base32 characters (5 bits each) of SHA-256 over the parts. The parts are encoded as a
 * JSON array so ("a-b","c") and ("a","b-c") can never hash alike.
 */
export function digest(parts: readonly string[], length = 20): string {
  const bytes = createHash('sha256').update(JSON.stringify(parts)).digest();
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < length) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= 0xff; // at most 7 bits are pending; keep the number small
    if (out.length >= length) break;
  }
  return out;
}
