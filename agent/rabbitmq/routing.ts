// How a copy reaches the one queue it is meant for (docs/design.md §7 "Routing exchanges"):
// copies are published with the producer's routing key, so a consumer that dispatches on
// `fields.routingKey` sees the key the producer used on every hop (source → shadow, shadow →
// shadow, shadow → source). So no exchange on that path may route by the key.
//
// - A session shadow has an exchange of its own: a fanout exchange named like the shadow, bound
//   to it alone. Fanout ignores the key, and routing through one binding costs the broker the
//   same at 1 route as at 1,000. (A single headers exchange with one binding per shadow, as
//   before, costs the broker a header match per binding per copy: 1,001 bindings cut its
//   throughput to 0.07 of one, test/bench/rabbitmq-routes.bench.ts.) The name is the shadow's:
//   exchange and queue names are separate namespaces, session shadow names are made by the
//   split alone (core/nameScheme.ts), so nobody else's exchange can carry one, and the engine's
//   user already has configure, write and read permission on it. It is auto-delete: deleting
//   the shadow (its one binding goes with it) deletes it, whoever deletes the shadow.
// - The application shadow and the source, which the engine did not name uniquely (the
//   source is the user's: an exchange named like it could be theirs), go through the split's
//   routing exchange: a headers exchange named like the application shadow, each bound with
//   `x-match: all-with-x` on the copy's `x-queue-split-to` header (RabbitMQ 3.10+; a plain
//   `all` binding skips arguments starting with `x-` and would match every copy). It holds two
//   bindings, so its per-binding match stays cheap. It is recorded with the application shadow
//   (checkpoint, controller state), so a restart, also one mid-cleanup, recomputes its name.
// - Every copy carries `x-queue-split-to: <queue>` (the publisher correlates returns by it).
// - Declaring and binding are idempotent: a new shadow is bound when it is declared, every
//   destination again before the pump starts and before a move, and after a copy was returned
//   or lost (a restart, or an exchange or binding removed behind the engine, heal there). A copy
//   published while its binding is missing is returned (mandatory), so it is retried and never
//   lost; one published to an exchange that is gone closes the publish channel (404), and is
//   retried to the same queue after the exchange is declared again.
// - The routing exchange is deleted at cleanup, after every shadow is gone; a session shadow's
//   own exchange goes with the shadow, and is deleted explicitly too when the engine finds the
//   shadow gone (an exchange declared again for a shadow deleted behind the engine has no
//   binding to auto-delete it).
import { replyCode, ReplyCode } from './amqpErrors';
import type { Link } from './amqpConnection';

/** The header a copy carries naming the queue it is meant for. */
export const ROUTE_HEADER = 'x-queue-split-to';

export type RouteResult = { ok: true } | { ok: false; problem: string };

/** Where copies to one queue are published. `exchange` is the split's routing exchange (named
 * like the application shadow); `source` the split's source queue. */
export function copyExchange(exchange: string, source: string, queue: string): string {
  return ownsExchange(exchange, source, queue) ? queue : exchange;
}

/** A session shadow: neither the source nor the application shadow. */
function ownsExchange(exchange: string, source: string, queue: string): boolean {
  return queue !== exchange && queue !== source;
}

/** Declares the exchange copies to `queue` go through and binds `queue` to it. */
export async function ensureRoute(link: Link, exchange: string, queue: string): Promise<RouteResult> {
  const own = ownsExchange(exchange, link.sourceQueue, queue);
  try {
    await link.withChannel('route', async (ch) => {
      if (own) {
        await ch.assertExchange(queue, 'fanout', { durable: true, autoDelete: true });
        await ch.bindQueue(queue, queue, '');
        return;
      }
      await ch.assertExchange(exchange, 'headers', { durable: true, autoDelete: false });
      await ch.bindQueue(queue, exchange, '', { 'x-match': 'all-with-x', [ROUTE_HEADER]: queue });
    });
    return { ok: true };
  } catch (err) {
    if (replyCode(err) === ReplyCode.PRECONDITION_FAILED) {
      return {
        ok: false,
        problem: own
          ? `exchange ${queue} exists with another declaration (the split declares it as a durable auto-delete fanout exchange for the shadow of the same name)`
          : `exchange ${exchange} exists with another declaration, or the broker refuses an x-match all-with-x binding (RabbitMQ 3.10 or newer is needed)`,
      };
    }
    throw err;
  }
}

/** Deletes a session shadow's own exchange once the shadow is gone; no-op for the others
 * (the routing exchange goes at cleanup). One already gone counts as deleted. */
export async function deleteShadowExchange(link: Link, exchange: string, queue: string): Promise<void> {
  if (ownsExchange(exchange, link.sourceQueue, queue)) await deleteExchange(link, queue);
}

/** Deletes the routing exchange; one already gone counts as deleted. */
export async function deleteRoutingExchange(link: Link, exchange: string): Promise<void> {
  await deleteExchange(link, exchange);
}

async function deleteExchange(link: Link, name: string): Promise<void> {
  try {
    await link.withChannel('route', (ch) => ch.deleteExchange(name));
  } catch (err) {
    if (replyCode(err) !== ReplyCode.NOT_FOUND) throw err;
  }
}
