// The split's routing (docs/design.md §7 "Routing exchange"): a copy is published with the
// producer's routing key, through an exchange that delivers it to one queue only, so a consumer
// that dispatches on `fields.routingKey` sees the key the producer used on every hop (source →
// shadow, shadow → shadow, shadow → source).
//
// - One durable `fanout` exchange per destination queue, bound to that queue alone. A fanout
//   exchange ignores the routing key, so no producer key can reach a second queue, and it routes
//   in constant time: the single headers exchange this replaces matched every binding on every
//   publish (at 1,001 bindings the broker alone ran at 0.07 of one binding).
// - Names (core/providers/rabbitmq/names.ts): the engine's routing exchange name (its
//   application shadow's: exchange and queue names are separate namespaces, it is unique per
//   engine, bounded, and recorded in the checkpoint and the controller's state) plus `.to-` and
//   a hash of the destination queue. Never a user's exchange; a restart, also one mid-cleanup,
//   recomputes each from the queue names it has recorded, and declares or deletes it again.
// - Declaring and binding are idempotent: a new shadow is bound when it is declared, every
//   destination again before the pump starts and before a move, and after a copy that came back
//   (a restart, or an exchange or binding removed behind the engine, heal there). A copy
//   published while its binding is missing is returned (mandatory); while its exchange is
//   missing, the broker closes the publishing channel and the copy is lost to the engine
//   (ambiguous). Both are retried after the route is declared again: never acked unrouted.
// - A route's exchange is deleted with its shadow (a drained route), the rest at cleanup after
//   every shadow is gone: by then nothing publishes through them. Deleting one drops its binding,
//   the source's included. Cleanup also deletes the single headers exchange earlier agents used
//   (named like the routing exchange itself), so a split started by one is cleaned up fully.
import { destinationExchangeName } from '../../core/providers/rabbitmq/names';
import { replyCode, ReplyCode } from './amqpErrors';
import type { Link } from './amqpConnection';

export type RouteResult = { ok: true } | { ok: false; problem: string };

/** How many destinations' exchange names a `RouteNames` remembers before it starts afresh. */
const REMEMBERED_NAMES = 4096;

/** The exchange names of one engine's destinations, remembered so a copy costs no hash. */
export class RouteNames {
  private readonly names = new Map<string, string>();

  constructor(readonly routingExchange: string) {}

  /** The exchange that delivers to `queue` alone. */
  exchangeFor(queue: string): string {
    let name = this.names.get(queue);
    if (name === undefined) {
      // Routes come and go over a split: bounded, and recomputing costs one hash.
      if (this.names.size >= REMEMBERED_NAMES) this.names.clear();
      name = destinationExchangeName(this.routingExchange, queue);
      this.names.set(queue, name);
    }
    return name;
  }
}

/** Declares `queue`'s exchange (durable fanout) and binds `queue` to it. */
export async function ensureRoute(link: Link, routes: RouteNames, queue: string): Promise<RouteResult> {
  const exchange = routes.exchangeFor(queue);
  try {
    await link.withChannel('route', async (ch) => {
      await ch.assertExchange(exchange, 'fanout', { durable: true, autoDelete: false });
      await ch.bindQueue(queue, exchange, '');
    });
    return { ok: true };
  } catch (err) {
    if (replyCode(err) === ReplyCode.PRECONDITION_FAILED) {
      return { ok: false, problem: `exchange ${exchange} exists with another declaration` };
    }
    throw err;
  }
}

/** Deletes the exchange of each of `queues`, and the one headers exchange earlier agents used
 * (named like the routing exchange itself); one already gone counts as deleted. */
export async function deleteRoutes(link: Link, routes: RouteNames, queues: Iterable<string>): Promise<void> {
  const exchanges = new Set([...queues].map((q) => routes.exchangeFor(q)));
  exchanges.add(routes.routingExchange);
  for (const exchange of exchanges) await deleteExchange(link, exchange);
}

/** Deletes the exchange of `queue` alone (its route was drained and its shadow deleted). */
export function deleteRoute(link: Link, routes: RouteNames, queue: string): Promise<void> {
  return deleteExchange(link, routes.exchangeFor(queue));
}

async function deleteExchange(link: Link, exchange: string): Promise<void> {
  try {
    await link.withChannel('route', (ch) => ch.deleteExchange(exchange));
  } catch (err) {
    if (replyCode(err) !== ReplyCode.NOT_FOUND) throw err;
  }
}
