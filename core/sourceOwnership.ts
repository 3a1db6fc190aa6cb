// Ownership keys (docs/design.md §7): a non-secret hash naming "this source, consumed this way, on this
// broker", so the controller can refuse a second split (or a second installation) taking over
// the same source. Credentials never enter the key. Normalisation errs towards equal keys: ports
// and schemes are dropped (amqp://h:5672 and amqps://h:5671 are one broker), so a false conflict
// (refuse) is possible, a missed one (two owners) is not for endpoints written with one host
// name. Different bootstrap host lists for one Kafka cluster still give different keys. Each
// provider says which parts its key has (core/providers/<provider>/ownership.ts).
import { digest } from './hash';
import { coreProvider } from './providers/registry';
import type { ResolvedQueue } from './queueConfig/resolvedTypes';

/**
 * The ownership key of one resolved queue: the broker endpoint when it is a literal, else the
 * Secret/ConfigMap reference it comes from (the controller never reads a Secret value), with the
 * source (and the consumer group). Two queues with one key consume one source the same way.
 */
export function sourceOwnershipKey(namespace: string, queue: ResolvedQueue): string {
  const { role, literalKey, group } = coreProvider(queue.provider).ownership(queue);
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
