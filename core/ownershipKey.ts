// The pieces of an ownership key (docs/design.md §7) every provider's key is made of: a
// normalised host and the hash of the key's parts. The key of a resolved queue is
// core/sourceOwnership.ts; each provider says which parts it has (core/providers/<provider>/
// ownership.ts).
import { digest } from './hash';

const SCHEME = 'ownership-v1';

/** Lowercase, without IPv6 brackets or a trailing dot. */
export function normaliseHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/** The key of a literal endpoint's parts (the provider's name first). */
export function ownershipKey(parts: readonly string[]): string {
  return `own-${digest([SCHEME, ...parts], 32)}`;
}
