// The agent image: the registry path the project publishes it under (README "The agent image"),
// and the one check every place that takes an image from a user applies — a fully qualified
// reference (a registry host, never a Docker Hub short name the project does not own) pinned by a
// tag or a digest. A digest, `…@sha256:<64 hex>`, is kept as given so the cluster runs exactly
// the bytes that were released.
import { productVersion } from './version';

export const AGENT_IMAGE_REPOSITORY = 'ghcr.io/queuesplit/queue-split-agent';
export const defaultAgentImage = `${AGENT_IMAGE_REPOSITORY}:${productVersion}`;

export interface ImageReference {
  /** The whole reference, as given. */
  reference: string;
  registry: string;
  /** The path under the registry, e.g. `queuesplit/queue-split-agent`. */
  path: string;
  tag?: string;
  /** `sha256:<64 hex>` */
  digest?: string;
}

// The grammar of github.com/distribution/reference, restricted to sha256 digests.
const hostPattern =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?$/;
const componentPattern = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const tagPattern = /^[\w][\w.-]{0,127}$/;
const digestPattern = /^sha256:[a-f0-9]{64}$/;

const source = (pattern: RegExp) => pattern.source.replace(/^\^|\$$/g, '');

/**
 * What parseImageReference accepts, as one regular expression that RE2 (Helm's values.schema.json)
 * and JavaScript read alike: a registry host (with a dot or a port, or localhost), a path, and a
 * tag, a digest or both. test/unit/deploy/helmChart.test.ts holds the two to agreement.
 */
export const imageReferencePattern = (() => {
  const label = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
  const host = `(?:localhost(?::[0-9]+)?|${label}(?:\\.${label})+(?::[0-9]+)?|${label}:[0-9]+)`;
  const component = source(componentPattern);
  const digest = `@${source(digestPattern)}`;
  return `^${host}/${component}(?:/${component})*(?::${source(tagPattern)}(?:${digest})?|${digest})$`;
})();

/** The digest of a reference (`…@sha256:…`), without judging the rest. */
export function imageDigest(reference: string): string | undefined {
  const at = reference.lastIndexOf('@');
  return at === -1 ? undefined : reference.slice(at + 1);
}

/**
 * Parses an image reference a user gave as `field` (a setting or flag name); throws an error
 * that names the field, what is wrong and the fix.
 */
export function parseImageReference(reference: string, field: string): ImageReference {
  const fail = (problem: string): never => {
    throw new Error(
      `${field}: ${problem}. Give a fully qualified image with a tag or digest, e.g. ${defaultAgentImage} or ${AGENT_IMAGE_REPOSITORY}@sha256:<64 hex digits>`,
    );
  };
  if (reference.trim() === '') fail('the image is empty');
  if (/\s/.test(reference)) fail(`"${reference}" contains whitespace`);
  const at = reference.indexOf('@');
  const name = at === -1 ? reference : reference.slice(0, at);
  const digest = at === -1 ? undefined : reference.slice(at + 1);
  if (digest !== undefined && !digestPattern.test(digest)) {
    fail(`the digest of "${reference}" is not sha256: followed by 64 lowercase hex digits`);
  }
  const slash = name.indexOf('/');
  const first = slash === -1 ? '' : name.slice(0, slash);
  // As Docker decides: the first component names a registry only if it looks like a host.
  const hasRegistry = first === 'localhost' || first.includes('.') || first.includes(':');
  if (!hasRegistry) {
    fail(
      `"${reference}" names no registry, so it would be pulled from Docker Hub, where the project owns no name`,
    );
  }
  if (!hostPattern.test(first)) fail(`"${first}" is not a registry host`);
  let rest = name.slice(slash + 1);
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon !== -1) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!tagPattern.test(tag)) fail(`the tag "${tag}" is not a valid tag`);
  }
  if (rest === '' || !rest.split('/').every((c) => componentPattern.test(c))) {
    fail(`"${rest}" is not a repository path (lowercase letters, digits and . _ - between them)`);
  }
  if (tag === undefined && digest === undefined) {
    fail(`"${reference}" has neither a tag nor a digest, so every pull may get a different image`);
  }
  return {
    reference,
    registry: first,
    path: rest,
    ...(tag !== undefined ? { tag } : {}),
    ...(digest !== undefined ? { digest } : {}),
  };
}
