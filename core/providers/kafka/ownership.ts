// Kafka's ownership key (core/sourceOwnership.ts): one group consuming one topic on one cluster,
// the cluster named by its sorted bootstrap hosts.
import { normaliseHost, ownershipKey } from '../../ownershipKey';
import { fail, fieldError, ok, type Result } from '../../result';

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

/** One Kafka group consuming one topic on one cluster. */
export function kafkaOwnershipKey(input: { brokers: string; topic: string; group: string }): Result<string> {
  const brokers = normaliseKafkaBrokers(input.brokers);
  if (!brokers.ok) return brokers;
  return ok(ownershipKey(['kafka', brokers.value, input.topic, input.group]));
}
