// An SQS message as a session message (core/providers/contract.ts MessageFacet): its part (every
// message attribute with its data type, and the system attributes), the message from a receive,
// and its form on the session stream. The filter's view is headers.ts.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { brokerTime } from '../../brokerTime';
import { asBuffer, wireBytes, type WireBase } from '../../messageWire';
import type { ShadowMessage } from '../../shadowMessage';
import type { MessageFacet } from '../contract';
import { sqsFilterHeaders, type SnsEnvelope } from './headers';
import type { SqsTypes } from './provider';

/** One message attribute as carried: its data type (custom types such as `String.uuid` kept)
 * and its value. */
export interface SqsCarriedAttribute {
  dataType: string;
  stringValue?: string;
  binaryValue?: Buffer;
}

/** Every message attribute with its data type (Binary values as bytes), and the system
 * attributes as received (AWSTraceHeader, MessageGroupId, SentTimestamp, …). */
export interface SqsMessagePart {
  provider: 'sqs';
  attributes: Record<string, SqsCarriedAttribute>;
  system: Record<string, string>;
  /** Declared `off` only: the filter view reads no SNS envelope (absent: auto). */
  snsEnvelope?: 'off';
}

/** An SQS message as received (the SDK's Message; its fields are structurally these). */
export interface SqsReceived {
  MessageId?: string | undefined;
  Body?: string | undefined;
  Attributes?: Partial<Record<string, string>> | undefined;
  MessageAttributes?:
    | Record<
        string,
        {
          DataType?: string | undefined;
          StringValue?: string | undefined;
          BinaryValue?: Uint8Array | undefined;
        }
      >
    | undefined;
}

/** A session shadow's SQS message; its id is the shadow's MessageId (stable across receives).
 * Its filter view reads an SNS envelope as the queue's declaration says. */
export function sqsShadowMessage(
  queue: string,
  message: SqsReceived,
  snsEnvelope: SnsEnvelope,
): ShadowMessage {
  const attributes: Record<string, SqsCarriedAttribute> = {};
  for (const [name, a] of Object.entries(message.MessageAttributes ?? {})) {
    attributes[name] = {
      dataType: a.DataType ?? 'String',
      ...(a.StringValue !== undefined ? { stringValue: a.StringValue } : {}),
      ...(a.BinaryValue !== undefined ? { binaryValue: Buffer.from(a.BinaryValue) } : {}),
    };
  }
  const system: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.Attributes ?? {}))
    if (value !== undefined) system[name] = value;
  return fromSqs(queue, message.MessageId ?? randomUUID(), Buffer.from(message.Body ?? '', 'utf8'), {
    provider: 'sqs',
    attributes,
    system,
    ...(snsEnvelope === 'off' ? { snsEnvelope } : {}),
  });
}

function fromSqs(queue: string, id: string, body: Buffer, sqs: SqsMessagePart): ShadowMessage {
  const sent = Number(sqs.system.SentTimestamp);
  const text = body.toString('utf8');
  const attributes = Object.fromEntries(
    Object.entries(sqs.attributes).map(([name, a]) => [
      name,
      { DataType: a.dataType, StringValue: a.stringValue, BinaryValue: a.binaryValue },
    ]),
  );
  const contentType = sqs.attributes['content-type']?.stringValue;
  return {
    queue,
    id,
    body,
    time: sent > 0 ? brokerTime(sent) : new Date(),
    ...(contentType !== undefined ? { contentType } : {}),
    headers: Object.entries(sqs.attributes).map(([name, a]) => ({
      name,
      value: a.binaryValue ?? a.stringValue,
    })),
    filterHeaders: sqsFilterHeaders(attributes, text, sqs.snsEnvelope ?? 'auto'),
    broker: sqs,
  };
}

// ---- on the session stream: under `sqs`, as v2 peers send it

const sqsWireSchema = z.object({
  /** Message attributes by name: data type and value (Binary as bytes). */
  attributes: z.record(
    z.string(),
    z.object({ dataType: z.string(), stringValue: z.string().optional(), binaryValue: wireBytes.optional() }),
  ),
  /** System attributes as received (AWSTraceHeader, MessageGroupId, SentTimestamp, …). */
  system: z.record(z.string(), z.string()),
  /** `off` when the declaration says so: the filter view reads no SNS envelope. */
  snsEnvelope: z.literal('off').optional(),
});
export type SqsWirePart = z.infer<typeof sqsWireSchema>;

function fromWire(queue: string, w: WireBase, s: SqsWirePart): ShadowMessage {
  const attributes: Record<string, SqsCarriedAttribute> = {};
  for (const [name, a] of Object.entries(s.attributes))
    attributes[name] = {
      dataType: a.dataType,
      ...(a.stringValue !== undefined ? { stringValue: a.stringValue } : {}),
      ...(a.binaryValue !== undefined ? { binaryValue: asBuffer(a.binaryValue) } : {}),
    };
  const message = fromSqs(queue, w.id, asBuffer(w.body), {
    provider: 'sqs',
    attributes,
    system: { ...s.system },
    ...(s.snsEnvelope === 'off' ? { snsEnvelope: 'off' as const } : {}),
  });
  return { ...message, time: brokerTime(w.time) };
}

export const sqsMessage: MessageFacet<SqsTypes> = {
  wireKey: 'sqs',
  wireSchema: sqsWireSchema,
  toWire: (part) => ({
    attributes: { ...part.attributes },
    system: { ...part.system },
    ...(part.snsEnvelope ? { snsEnvelope: part.snsEnvelope } : {}),
  }),
  fromWire,
  // A queue is settled message by message: no lane holds up the others.
  lane: () => undefined,
  wireLane: () => undefined,
};
