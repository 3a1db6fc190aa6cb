// A route's session secret (core/sessionStream.ts): made by whoever creates the split (the
// sidecar, or the extension that then starts it), proven by the sidecar to the queue-agent; only
// its hash is in the QueueSplit spec. No imports beyond node:crypto: the extension's activation
// bundle uses it.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes, base64url. */
export const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
export const SECRET_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

export const newSessionSecret = (): string => randomBytes(32).toString('base64url');

export function secretHash(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('hex')}`;
}

/** Constant-time check of a presented secret against the spec's hash. */
export function secretMatches(secret: string, hash: string): boolean {
  if (!SECRET_HASH_PATTERN.test(hash)) return false;
  const a = Buffer.from(secretHash(secret));
  const b = Buffer.from(hash);
  return a.length === b.length && timingSafeEqual(a, b);
}
