// What the engine reads of an SQS message and what its copy carries (docs/providers/sqs.md,
// facts 1 and 2): the body as received, every message attribute as received (any data type),
// and the AWSTraceHeader system attribute. The filter reads String attributes and Number ones
// by their text; Binary never matches. With `snsEnvelope: auto` a body that is an SNS
// notification (raw delivery off) is read for the publisher's attributes too.
import type { Message, MessageAttributeValue, MessageSystemAttributeValue } from '@aws-sdk/client-sqs';
import { MessageView, type MessageHeaders } from '../../core/filter';
import { snsAttributes, sqsFilterBody, sqsFilterHeaders } from '../../core/providers/sqs/headers';
import type { SnsEnvelope } from '../../core/providers/sqs/headers';

/** The headers a filter sees (core/providers/sqs/headers.ts). */
export function filterHeaders(message: Message, snsEnvelope: SnsEnvelope): MessageHeaders {
  return sqsFilterHeaders(message.MessageAttributes, message.Body, snsEnvelope);
}

/** The message as route filters read it: its headers and (for body fields) its body. */
export function filterView(message: Message, snsEnvelope: SnsEnvelope): MessageView {
  return new MessageView(filterHeaders(message, snsEnvelope), sqsFilterBody(message.Body, snsEnvelope));
}

/** The attributes of an SNS notification body, else none. */
export { snsAttributes };

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
