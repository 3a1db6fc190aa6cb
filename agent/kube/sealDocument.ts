// The seal ConfigMap's contract, shared by the controller that writes it and the queue-agent
// that checks its desired document against it (README "Trust boundaries"). A seal lists SHA-256
// digests, comma-separated: under `digests` the state documents, under `desired` the desired
// documents the controller wrote (newest first, the one it replaces second).
import { createHash } from 'node:crypto';

export const STATE_DIGESTS_KEY = 'digests';
export const DESIRED_DIGESTS_KEY = 'desired';

export const documentDigest = (text: string): string => createHash('sha256').update(text).digest('hex');

export const sealDigests = (data: Record<string, string>, key: string): string[] =>
  (data[key] ?? '').split(',').filter((d) => d !== '');

/** Whether a seal's `key` lists the digest of `text`. */
export const sealLists = (data: Record<string, string>, key: string, text: string): boolean =>
  sealDigests(data, key).includes(documentDigest(text));
