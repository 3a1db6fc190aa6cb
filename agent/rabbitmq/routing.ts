// The split's routing exchange (docs/design.md §7 "Routing exchange"): copies are published
// through it with the producer's routing key, and it delivers each to the one queue named in
// its `x-queue-split-to` header, so a consumer that dispatches on `fields.routingKey` sees the
// key the producer used on every hop (source → shadow, shadow → shadow, shadow → source).
//
// - A headers exchange ignores the routing key entirely, so no key can reach a second queue.
//   Each destination is bound with `x-match: all-with-x` (RabbitMQ 3.10+): a plain `all`
//   binding skips arguments starting with `x-`, and would match every copy.
// - It is named like the engine's application shadow: exchange and queue names are separate
//   namespaces, the name is already unique per engine and bounded (core/names.ts), and it is
//   recorded in the checkpoint and the controller's state, so a restart (also one mid-cleanup)
//   recomputes it and declares or deletes it again.
// - Declaring and binding are idempotent: a new shadow is bound when it is declared, every
//   destination again before the pump starts and before a move (a restart, or an exchange
//   removed behind the engine, heal there). A copy published while its binding is missing is
//   returned (mandatory), so it is retried and never lost.
// - It is deleted at cleanup, after every shadow is gone: by then nothing publishes through it.
//   Its bindings, the source's included, go with it.
import { replyCode, ReplyCode } from './amqpErrors';
import type { Link } from './amqpConnection';

/** The header a copy carries naming the queue the routing exchange delivers it to. */
export const ROUTE_HEADER = 'x-queue-split-to';

export type RouteResult = { ok: true } | { ok: false; problem: string };

/** Declares the routing exchange (durable headers) and binds `queue` to it. */
export async function ensureRoute(link: Link, exchange: string, queue: string): Promise<RouteResult> {
  try {
    await link.withChannel('route', async (ch) => {
      await ch.assertExchange(exchange, 'headers', { durable: true, autoDelete: false });
      await ch.bindQueue(queue, exchange, '', { 'x-match': 'all-with-x', [ROUTE_HEADER]: queue });
    });
    return { ok: true };
  } catch (err) {
    if (replyCode(err) === ReplyCode.PRECONDITION_FAILED) {
      return {
        ok: false,
        problem: `exchange ${exchange} exists with another declaration, or the broker refuses an x-match all-with-x binding (RabbitMQ 3.10 or newer is needed)`,
      };
    }
    throw err;
  }
}

/** Deletes the routing exchange; one already gone counts as deleted. */
export async function deleteRoutingExchange(link: Link, exchange: string): Promise<void> {
  try {
    await link.withChannel('route', (ch) => ch.deleteExchange(exchange));
  } catch (err) {
    if (replyCode(err) !== ReplyCode.NOT_FOUND) throw err;
  }
}
