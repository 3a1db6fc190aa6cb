// RabbitMQ's ownership key (core/sourceOwnership.ts): one queue in one vhost on one broker.
import { normaliseHost, ownershipKey } from '../../ownershipKey';
import { fail, fieldError, ok, type Result } from '../../result';

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

/** One RabbitMQ queue in one vhost on one broker. */
export function rabbitOwnershipKey(input: { url: string; queue: string }): Result<string> {
  const endpoint = normaliseAmqpEndpoint(input.url);
  if (!endpoint.ok) return fail(endpoint.errors);
  return ok(ownershipKey(['rabbitmq', endpoint.value.host, endpoint.value.vhost, input.queue]));
}
