// A route's session secret (core/sessionStream.ts): made by whoever creates the split (the
// sidecar, or the extension that then starts it) and never sent anywhere. It is the seed of an
// Ed25519 key; the QueueSplit spec carries only the public half (`spec.session.publicKey`), and
// the sidecar proves the secret by signing the queue-agent's challenge, bound to the route and
// to the agent pod it meant to reach, so a pod that merely looks like the queue-agent (or
// relays to it) learns nothing it can replay (README "Trust boundaries"). No imports beyond
// node:crypto: the extension's activation bundle uses it.
import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';

/** 32 random bytes, base64url. */
export const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** ed25519:<the raw 32-byte public key, base64url>. */
export const PUBLIC_KEY_PATTERN = /^ed25519:[A-Za-z0-9_-]{43}$/;
/** What splits made before public keys carried (sha256 of the secret); no longer accepted. */
export const SECRET_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;
/** A challenge's nonce: 32 random bytes, base64url. */
export const NONCE_PATTERN = SECRET_PATTERN;

export const newSessionSecret = (): string => randomBytes(32).toString('base64url');
export const newNonce = (): string => randomBytes(32).toString('base64url');

// DER prefixes of an Ed25519 PKCS#8 private key and SPKI public key around their 32 raw bytes.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const privateKey = (secret: string) =>
  createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, Buffer.from(secret, 'base64url')]),
    format: 'der',
    type: 'pkcs8',
  });

/** The public half of the secret's key, as the spec carries it. */
export function sessionPublicKey(secret: string): string {
  const spki = createPublicKey(privateKey(secret)).export({ format: 'der', type: 'spki' });
  return `ed25519:${spki.subarray(SPKI_PREFIX.length).toString('base64url')}`;
}

/** What a proof signs: the route, the agent pod the client meant to reach, the agent's nonce. */
export interface Challenge {
  routeId: string;
  podUid: string;
  nonce: string;
}

const signed = (c: Challenge) =>
  Buffer.from(`queuesplit.session.v2\n${c.routeId}\n${c.podUid}\n${c.nonce}`, 'utf8');

/** The sidecar's answer to a challenge (base64url Ed25519 signature). */
export function sessionProof(secret: string, challenge: Challenge): string {
  return sign(null, signed(challenge), privateKey(secret)).toString('base64url');
}

/** Whether `proof` answers `challenge` for the key `publicKey` (false for any malformed input). */
export function proofMatches(publicKey: string, challenge: Challenge, proof: string): boolean {
  if (!PUBLIC_KEY_PATTERN.test(publicKey)) return false;
  try {
    const key = createPublicKey({
      key: Buffer.concat([SPKI_PREFIX, Buffer.from(publicKey.slice('ed25519:'.length), 'base64url')]),
      format: 'der',
      type: 'spki',
    });
    return verify(null, signed(challenge), key, Buffer.from(proof, 'base64url'));
  } catch {
    return false;
  }
}

/** The legacy hash of a secret (tests of splits made before public keys). */
export function secretHash(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('hex')}`;
}

/** Whether `secret` is the one behind a spec's `publicKey`. */
export function secretFits(secret: string, publicKey: string | undefined): boolean {
  return publicKey !== undefined && SECRET_PATTERN.test(secret) && sessionPublicKey(secret) === publicKey;
}
