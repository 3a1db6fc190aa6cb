// A RabbitMQ delivery as a session message (core/providers/contract.ts MessageFacet): its part
// (the AMQP basic properties, headers with their typed values, and the redelivered flag), the
// message from an amqplib delivery, the filter's view of its headers, and its form on the
// session stream.
import { randomUUID } from 'node:crypto';
import type { Message as AmqpMessage, MessageProperties } from 'amqplib';
import { z } from 'zod';
import { brokerTime } from '../../brokerTime';
import type { MessageHeaders } from '../../filter';
import { asBuffer, withBuffers, type WireBase } from '../../messageWire';
import type { ShadowMessage } from '../../shadowMessage';
import type { MessageFacet } from '../contract';
import type { RabbitTypes } from './provider';

/** The AMQP basic properties a delivery mode forwards (relay) or maps (http). */
export interface AmqpProperties {
  contentType?: string;
  contentEncoding?: string;
  headers?: Record<string, unknown>;
  deliveryMode?: number;
  priority?: number;
  correlationId?: string;
  replyTo?: string;
  expiration?: string;
  messageId?: string;
  timestamp?: number;
  type?: string;
  userId?: string;
  appId?: string;
}

export interface RabbitMessagePart {
  provider: 'rabbitmq';
  properties: AmqpProperties;
  redelivered: boolean;
}

/** AMQP table → headers. Non-string values (numbers, booleans, Buffers, tables, arrays) never match. */
export function amqpHeaders(headers: Readonly<Record<string, unknown>> | undefined): MessageHeaders {
  const result = new Map<string, string>();
  if (typeof headers !== 'object' || headers === null) return result;
  for (const key of Object.keys(headers)) {
    const value = headers[key];
    if (typeof value === 'string') result.set(key, value);
  }
  return result;
}

function amqpProperties(p: MessageProperties): AmqpProperties {
  // amqplib types every property as `any`; keep only well-typed values.
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  const out: AmqpProperties = {};
  const set = <K extends keyof AmqpProperties>(k: K, v: AmqpProperties[K] | undefined): void => {
    if (v !== undefined) out[k] = v;
  };
  set('contentType', str(p.contentType));
  set('contentEncoding', str(p.contentEncoding));
  set(
    'headers',
    typeof p.headers === 'object' && p.headers !== null ? (p.headers as Record<string, unknown>) : undefined,
  );
  set('deliveryMode', num(p.deliveryMode));
  set('priority', num(p.priority));
  set('correlationId', str(p.correlationId));
  set('replyTo', str(p.replyTo));
  set('expiration', str(p.expiration));
  set('messageId', str(p.messageId));
  set('timestamp', num(p.timestamp));
  set('type', str(p.type));
  set('userId', str(p.userId));
  set('appId', str(p.appId));
  return out;
}

/** Its id is the message-id property, else generated (then not stable across redeliveries). */
function fromAmqpProperties(
  queue: string,
  properties: AmqpProperties,
  body: Buffer,
  redelivered: boolean,
  id?: string,
): ShadowMessage {
  return {
    queue,
    id:
      id ??
      (properties.messageId !== undefined && properties.messageId !== ''
        ? properties.messageId
        : randomUUID()),
    body,
    time: properties.timestamp !== undefined ? brokerTime(properties.timestamp * 1000) : new Date(),
    ...(properties.contentType !== undefined ? { contentType: properties.contentType } : {}),
    headers: Object.entries(properties.headers ?? {}).map(([name, value]) => ({ name, value })),
    filterHeaders: amqpHeaders(properties.headers),
    broker: { provider: 'rabbitmq', properties, redelivered },
  };
}

/** A session queue's delivery. */
export function amqpShadowMessage(queue: string, msg: AmqpMessage): ShadowMessage {
  return fromAmqpProperties(queue, amqpProperties(msg.properties), msg.content, msg.fields.redelivered);
}

// ---- on the session stream: under `amqp`, as v2 peers send it

const rabbitWireSchema = z.object({
  /** amqplib's decoded basic properties (headers with their decoded values). */
  properties: z.record(z.string(), z.unknown()),
  redelivered: z.boolean(),
});
export type RabbitWirePart = z.infer<typeof rabbitWireSchema>;

function fromWire(queue: string, w: WireBase, a: RabbitWirePart): ShadowMessage {
  // The properties were this module's AmqpProperties when sent; only their bytes changed form.
  const properties = withBuffers(a.properties) as AmqpProperties;
  const message = fromAmqpProperties(queue, properties, asBuffer(w.body), a.redelivered, w.id);
  return { ...message, time: brokerTime(w.time) };
}

export const rabbitMessage: MessageFacet<RabbitTypes> = {
  wireKey: 'amqp',
  wireSchema: rabbitWireSchema,
  toWire: (part) => ({ properties: { ...part.properties }, redelivered: part.redelivered }),
  fromWire,
  // A queue is settled message by message: no lane holds up the others.
  lane: () => undefined,
  wireLane: () => undefined,
};
