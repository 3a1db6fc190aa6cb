// What a route filter reads of an SQS message (docs/providers/sqs.md "The pump", "SNS
// envelopes"): String message attributes, and Number ones by their text (custom types such as
// `String.uuid` included); Binary never matches. With `snsEnvelope: auto` a body that is an SNS
// notification (raw delivery off) is read for the publisher's attributes too. Pure: the engine
// routes on it, and the session's messages are shown by it on either side of the stream.
import type { MessageHeaders } from '../../filter';

/** How the filter reads a body that is an SNS notification (raw delivery off). */
export type SnsEnvelope = 'auto' | 'off';

/** One message attribute as SQS carries it (the SDK's MessageAttributeValue, minus list types). */
export interface SqsAttribute {
  readonly DataType?: string | undefined;
  readonly StringValue?: string | undefined;
  readonly BinaryValue?: Uint8Array | undefined;
}

/** The headers a filter sees. A message's own attributes win over an envelope's of the same name. */
export function sqsFilterHeaders(
  attributes: Readonly<Record<string, SqsAttribute>> | undefined,
  body: string | undefined,
  snsEnvelope: SnsEnvelope,
): MessageHeaders {
  const headers = new Map<string, string>();
  if (snsEnvelope === 'auto' && body !== undefined) {
    for (const [name, value] of snsAttributes(body)) headers.set(name, value);
  }
  for (const [name, value] of Object.entries(attributes ?? {})) {
    const text = textValue(value.DataType, value.StringValue);
    if (text !== undefined) headers.set(name, text);
  }
  return headers;
}

/** The body a filter's body fields read: an SNS notification's Message (with snsEnvelope auto), else the body. */
export function sqsFilterBody(body: string | undefined, snsEnvelope: SnsEnvelope): string | undefined {
  if (
    snsEnvelope !== 'auto' ||
    body === undefined ||
    !body.startsWith('{') ||
    !body.includes('"Notification"')
  )
    return body;
  try {
    const envelope = JSON.parse(body) as { Type?: unknown; TopicArn?: unknown; Message?: unknown };
    if (
      envelope.Type === 'Notification' &&
      typeof envelope.TopicArn === 'string' &&
      typeof envelope.Message === 'string'
    )
      return envelope.Message;
  } catch {
    // not JSON: the body as it is
  }
  return body;
}

/** String and Number values (custom types such as `String.uuid` included) by their text. */
export function textValue(dataType: string | undefined, value: string | undefined): string | undefined {
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
