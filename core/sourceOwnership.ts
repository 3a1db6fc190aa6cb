// Ownership keys (docs/design.md §7): a non-secret hash naming "this source, consumed this way, on this
// broker", so the controller can refuse a second split (or a second installation) taking over
// the same source. Credentials never enter the key. Normalisation errs towards equal keys: ports
// and schemes are dropped (amqp://h:5672 and amqps://h:5671 are one broker), so a false conflict
// (refuse) is possible, a missed one (two owners) is not for endpoints written with one host
// name. Different bootstrap host lists for one Kafka cluster still give different keys.
import { digest } from './hash';
import { assertNever } from './providers';
import type { EnvRole, ResolvedQueue } from './queueConfig/resolvedTypes';
import { fail, fieldError, ok, type Result } from './result';

const SCHEME = 'ownership-v1';

function normaliseHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/** Sorted, de-duplicated bootstrap hosts of a `host:port,host:port` list (listener prefixes dropped). */
export function normaliseKafkaBrokers(brokers: string, path = 'brokers'): Result<string> {
  const hosts = new Set<string>();
  for (const entry of brokers.split(',')) {
    const withoutScheme = entry.trim().replace(/^[A-Za-z_]+:\/\//, '');
    if (withoutScheme === '') continue;
    const host = withoutScheme.startsWith('[')
      ? withoutScheme.slice(0, withoutScheme.indexOf(']') + 1)
      : withoutScheme.replace(/:\d*$/, '');
    const normalised = normaliseHost(host);
    if (normalised === '' || /[\s/@]/.test(normalised)) {
      return fail([
        fieldError(
          path,
          `"${entry.trim()}" is not a host:port broker address.`,
          'List brokers as host:port,host:port.',
        ),
      ]);
    }
    hosts.add(normalised);
  }
  if (hosts.size === 0) {
    return fail([fieldError(path, 'lists no broker.', 'List brokers as host:port,host:port.')]);
  }
  return ok([...hosts].sort().join(','));
}

export interface AmqpEndpoint {
  host: string;
  vhost: string;
}

/** Host and vhost of an amqp(s) URL; user, password, port and query are dropped. */
export function normaliseAmqpEndpoint(url: string, path = 'url'): Result<AmqpEndpoint> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail([
      fieldError(path, 'is not a URL.', 'Use amqp://host:5672/vhost or amqps://host:5671/vhost.'),
    ]);
  }
  if (parsed.protocol !== 'amqp:' && parsed.protocol !== 'amqps:') {
    return fail([
      fieldError(
        path,
        `has scheme "${parsed.protocol}", not amqp: or amqps:.`,
        'Use an amqp:// or amqps:// URL.',
      ),
    ]);
  }
  const host = normaliseHost(parsed.hostname);
  if (host === '') return fail([fieldError(path, 'has no host.', 'Use amqp://host:5672/vhost.')]);
  // Per the AMQP URI spec an absent path means the default vhost "/"; "/%2f" is "/" too.
  const rawVhost = parsed.pathname.replace(/^\//, '');
  let vhost: string;
  try {
    vhost = rawVhost === '' ? '/' : decodeURIComponent(rawVhost);
  } catch {
    return fail([
      fieldError(path, 'has a badly escaped vhost.', 'Percent-encode the vhost, e.g. /%2f for "/".'),
    ]);
  }
  return ok({ host, vhost });
}

function key(parts: readonly string[]): string {
  return `own-${digest([SCHEME, ...parts], 32)}`;
}

/** One Kafka group consuming one topic on one cluster. */
export function kafkaOwnershipKey(input: { brokers: string; topic: string; group: string }): Result<string> {
  const brokers = normaliseKafkaBrokers(input.brokers);
  if (!brokers.ok) return brokers;
  return ok(key(['kafka', brokers.value, input.topic, input.group]));
}

/** One RabbitMQ queue in one vhost on one broker. */
export function rabbitOwnershipKey(input: { url: string; queue: string }): Result<string> {
  const endpoint = normaliseAmqpEndpoint(input.url);
  if (!endpoint.ok) return fail(endpoint.errors);
  return ok(key(['rabbitmq', endpoint.value.host, endpoint.value.vhost, input.queue]));
}

/**
 * The ownership key of one resolved queue: the broker endpoint when it is a literal, else the
 * Secret/ConfigMap reference it comes from (the controller never reads a Secret value), with the
 * source (and the Kafka group). Two queues with one key consume one source the same way.
 */
export function sourceOwnershipKey(namespace: string, queue: ResolvedQueue): string {
  const { role, literalKey, group } = ownershipParts(queue);
  const source = queue.env.find((e) => e.role === role)?.source;
  if (source?.kind === 'value') {
    const literal = literalKey(source.value);
    if (literal.ok) return literal.value;
  }
  const ref =
    source?.kind === 'secretKeyRef'
      ? `secret:${namespace}/${source.secret}/${source.key}`
      : source?.kind === 'configMapKeyRef'
        ? `configmap:${namespace}/${source.configMap}/${source.key}`
        : 'unknown';
  return digest(['ownership-ref', queue.provider, ref, queue.source, group], 24);
}

/** Per provider: the env role of the broker endpoint, the key of a literal endpoint, and the
 * consumer group the key includes ('' where consumers share no group). */
function ownershipParts(queue: ResolvedQueue): {
  role: EnvRole;
  literalKey: (endpoint: string) => Result<string>;
  group: string;
} {
  switch (queue.provider) {
    case 'kafka':
      return {
        role: 'brokers',
        literalKey: (brokers) => kafkaOwnershipKey({ brokers, topic: queue.source, group: queue.group }),
        group: queue.group,
      };
    case 'rabbitmq':
      return {
        role: 'url',
        literalKey: (url) => rabbitOwnershipKey({ url, queue: queue.source }),
        group: '',
      };
    default:
      return assertNever(queue, 'queue');
  }
}
