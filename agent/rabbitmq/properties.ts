// What a shadow copy of a source message carries. Everything the producer set is copied,
// except what the broker or AMQP makes impossible (docs/design.md §5 "preserved where the destination
// API allows"):
// - deliveryMode is forced to 2 (persistent): the contract promises a *durable* copy;
// - userId is kept only when it equals the engine's user (RabbitMQ validates it against the
//   publishing connection and closes the channel otherwise);
// - the routing key is kept: copies go through their destination's own fanout exchange
//   (routing.ts), which ignores the routing key. The exchange describes the delivery (a copy's
//   is its destination's exchange): the first hop records the producer's in
//   `x-queue-split-exchange`, with the routing key in `x-queue-split-routing-key` (later hops
//   keep the first record). The redelivered flag describes the delivery too, and starts afresh;
// - header values keep their AMQP type and value when the message came through a connection
//   that captures raw headers (rawHeaders.ts, typedTable.ts): every integer width, float vs
//   double, 64-bit integers beyond 2^53, timestamps, decimals, byte arrays, booleans, void,
//   nested tables and arrays. A longstr whose bytes are not UTF-8 is not kept (amqplib encodes
//   strings as UTF-8);
// - a per-message `expiration` is copied as set, so its clock restarts at the shadow publish;
// - `CC` and `BCC` (sender-selected distribution) are routing instructions the broker already
//   carried out for the producer's publish: on a copy they would route it again (back into the
//   source, or a second time to the queues they name). The copy drops them and keeps the value
//   of `CC` as `x-queue-split-cc` (the broker strips `BCC` before any consumer sees it);
// - `x-delivery-count` is the broker's count of the source's redeliveries (quorum queues add it
//   to every redelivery and to every basic.get, even the first): it describes a delivery, not
//   the message, and a quorum shadow counts its own deliveries, so the copy drops it. The
//   dead-letter history (`x-death`, `x-first-death-*`, `x-last-death-*`) is the message's and
//   is kept as it came.
import type { Message, Options } from 'amqplib';
import { typedHeaders } from './rawHeaders';

/** Header names a copy never carries, with the reason above. */
export const DROPPED_HEADERS = ['CC', 'BCC', 'x-delivery-count'] as const;
/** Where a copy keeps the producer's `CC` list. */
export const CC_RECORD_HEADER = 'x-queue-split-cc';
/** Where a copy keeps the exchange and routing key the producer published with. */
export const EXCHANGE_RECORD_HEADER = 'x-queue-split-exchange';
export const ROUTING_KEY_RECORD_HEADER = 'x-queue-split-routing-key';

// amqplib encodes cluster-id but its type declarations omit it.
type PublishOptions = Options.Publish & { clusterId?: string };

export function shadowPublishOptions(
  msg: Pick<Message, 'fields' | 'properties'>,
  engineUser: string,
): PublishOptions {
  const p = msg.properties;
  const o: PublishOptions = { persistent: true, mandatory: true };
  // The typed table when the raw bytes were captured, so every header keeps its AMQP type.
  o.headers = copyHeaders(typedHeaders(p) ?? ((p.headers ?? {}) as Record<string, unknown>), msg.fields);
  if (p.contentType !== undefined) o.contentType = p.contentType;
  if (p.contentEncoding !== undefined) o.contentEncoding = p.contentEncoding;
  if (p.priority !== undefined) o.priority = p.priority;
  if (p.correlationId !== undefined) o.correlationId = p.correlationId;
  if (p.replyTo !== undefined) o.replyTo = p.replyTo;
  if (p.expiration !== undefined) o.expiration = p.expiration;
  if (p.messageId !== undefined) o.messageId = p.messageId;
  if (p.timestamp !== undefined) o.timestamp = p.timestamp;
  if (p.type !== undefined) o.type = p.type;
  if (p.appId !== undefined) o.appId = p.appId;
  if (p.clusterId !== undefined) o.clusterId = p.clusterId;
  if (p.userId !== undefined && p.userId === engineUser) o.userId = p.userId;
  return o;
}

function copyHeaders(
  headers: Record<string, unknown>,
  fields: { readonly exchange: string; readonly routingKey: string },
): Record<string, unknown> {
  const dropped: readonly string[] = DROPPED_HEADERS;
  const copy = Object.fromEntries(Object.entries(headers).filter(([name]) => !dropped.includes(name)));
  if (headers.CC !== undefined) copy[CC_RECORD_HEADER] = headers.CC;
  if (copy[EXCHANGE_RECORD_HEADER] === undefined && copy[ROUTING_KEY_RECORD_HEADER] === undefined) {
    copy[EXCHANGE_RECORD_HEADER] = fields.exchange;
    copy[ROUTING_KEY_RECORD_HEADER] = fields.routingKey;
  }
  return copy;
}
