// What a shadow copy of a source message carries. Everything the producer set is copied,
// except what the broker or AMQP makes impossible (DESIGN §5 "preserved where the destination
// API allows"):
// - deliveryMode is forced to 2 (persistent): the contract promises a *durable* copy;
// - userId is kept only when it equals the engine's user (RabbitMQ validates it against the
//   publishing connection and closes the channel otherwise);
// - exchange, routing key and the redelivered flag describe the delivery, not the message:
//   the copy is published through the default exchange to the shadow's name;
// - header values keep their value but not always their AMQP type tag: amqplib decodes every
//   integer width to a JS number and re-encodes it as the smallest signed type (an unsigned
//   byte 200 comes back as a short), floats become doubles, and 64-bit integers beyond 2^53
//   lose precision; timestamps, decimals, byte arrays, booleans, void, nested tables and arrays
//   keep their type;
// - a per-message `expiration` is copied as set, so its clock restarts at the shadow publish.
import type { MessageProperties, Options } from 'amqplib';

// amqplib encodes cluster-id but its type declarations omit it.
type PublishOptions = Options.Publish & { clusterId?: string };

export function shadowPublishOptions(p: MessageProperties, engineUser: string): PublishOptions {
  const o: PublishOptions = { persistent: true, mandatory: true };
  if (p.headers !== undefined) o.headers = p.headers;
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
