// What the engine reads of an SQS message and what its copy carries (docs/providers/sqs.md,
// facts 1 and 2): the body as received, every message attribute as received (any data type),
// and the AWSTraceHeader system attribute. The filter reads String attributes and Number ones
// by their text; Binary never matches. With `snsEnvelope: auto` a body that is an SNS
// notification (raw delivery off) is read for the publisher's attributes too.
import type { Message, MessageAttributeValue, MessageSystemAttributeValue } from '@aws-sdk/client-sqs';
import type { MessageHeaders } from '../../core/filter';
import type { SnsEnvelope } from './config';

/** The headers a filter sees. A message's own attributes win over an envelope's of the same name. */
export function filterHeaders(message: Message, snsEnvelope: SnsEnvelope): MessageHeaders {
  const headers = new Map<string, string>();
  if (snsEnvelope === 'auto' && message.Body !== undefined) {
    for (const [name, value] of snsAttributes(message.Body)) headers.set(name, value);
  }
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    const text = textValue(value.DataType, value.StringValue);
    if (text !== undefined) headers.set(name, text);
  }
  return headers;
}

/** String and Number values (custom types such as `String.uuid` included) by their text. */
function textValue(dataType: string | undefined, value: string | undefined): string | undefined {
  if (value === undefined || dataType === undefined) return undefined;
  const base = dataType.split('.')[0];
  return base === 'String' || base === 'Number' ? value : undefined;
}

/** The attributes of an SNS notification body (`"Type": "Notification"`), else none. */
export function snsAttributes(body: string): [string, string][] {
  // Cheap test first: most bodies are not envelopes, and JSON.parse of a large body is not free.
  if (!body.startsWith('{') || !body.includes('"Notification"')) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null) return [];
  const envelope = parsed as { Type?: unknown; TopicArn?: unknown; MessageAttributes?: unknown };
  if (envelope.Type !== 'Notification' || typeof envelope.TopicArn !== 'string') return [];
  const attrs = envelope.MessageAttributes;
  if (typeof attrs !== 'object' || attrs === null) return [];
  const out: [string, string][] = [];
  for (const [name, raw] of Object.entries(attrs)) {
    const a = raw as { Type?: unknown; Value?: unknown } | null;
    if (typeof a?.Type !== 'string' || typeof a.Value !== 'string') continue;
    const text = textValue(a.Type, a.Value);
    if (text !== undefined) out.push([name, text]);
  }
  return out;
}

/** What a copy of `message` is sent with: the body, attributes and trace header as received. */
export interface CopyContent {
  readonly MessageBody: string;
  readonly MessageAttributes?: Record<string, MessageAttributeValue>;
  readonly MessageSystemAttributes?: Record<string, MessageSystemAttributeValue>;
}

/** The FIFO fields of a copy: the source's group, and a deduplication id of the engine's. */
export interface FifoCopy {
  readonly MessageGroupId: string;
  readonly MessageDeduplicationId: string;
}

/** `dedupId`: for a FIFO destination, the copy's deduplication id (its group is the message's). */
export function copyOf(message: Message, dedupId?: string): CopyContent & Partial<FifoCopy> {
  const trace = message.Attributes?.AWSTraceHeader;
  const attributes = message.MessageAttributes;
  const group = message.Attributes?.MessageGroupId;
  return {
    MessageBody: message.Body ?? '',
    ...(dedupId !== undefined && group !== undefined
      ? { MessageGroupId: group, MessageDeduplicationId: dedupId }
      : {}),
    ...(attributes && Object.keys(attributes).length > 0 ? { MessageAttributes: attributes } : {}),
    ...(trace
      ? { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: trace } } }
      : {}),
  };
}

/**
 * The deduplication id of a pump copy to a FIFO shadow (docs/providers/sqs.md "FIFO"): the
 * source message's id, unique per stored message (a producer's own deduplication id may repeat
 * once its 5 minutes passed, and two such messages would collide in a shadow), with the receive
 * count: a send retried within one hold is dropped as a duplicate, while a copy after the
 * message came back (a crash between copy and delete) is a new delivery, as the application
 * would have seen without a split.
 */
export function pumpDedupId(message: Message): string {
  return `qs-${message.MessageId ?? ''}-${message.Attributes?.ApproximateReceiveCount ?? '0'}`;
}

/** What every receive of the engine asks for: everything a copy carries. */
export const RECEIVE_ALL = {
  MessageAttributeNames: ['All'],
  MessageSystemAttributeNames: [
    'AWSTraceHeader' as const,
    'ApproximateReceiveCount' as const,
    'MessageGroupId' as const,
  ],
};
