// What an SQS error means to the engine: a queue that is gone, a receipt handle that is no
// longer current (docs/providers/sqs.md fact 5), or a network that does not answer.
import { describeError } from '../log';

interface SdkError {
  readonly name?: unknown;
  readonly Code?: unknown;
  readonly code?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: number };
}

function names(err: unknown): string[] {
  const e = (err ?? {}) as SdkError;
  return [e.name, e.Code, e.code].filter((n): n is string => typeof n === 'string');
}

export function isQueueMissing(err: unknown): boolean {
  return names(err).some((n) => n === 'QueueDoesNotExist' || n.endsWith('NonExistentQueue'));
}

export function isReceiptInvalid(err: unknown): boolean {
  return names(err).some(
    (n) =>
      n === 'ReceiptHandleIsInvalid' || n.endsWith('MessageNotInflight') || n === 'InvalidParameterValue',
  );
}

/** No HTTP answer at all: the request never reached SQS, or its answer never came back. */
export function isNetworkError(err: unknown): boolean {
  const e = (err ?? {}) as SdkError;
  return e.$metadata?.httpStatusCode === undefined && !(err instanceof TypeError);
}

export function errorName(err: unknown): string {
  return names(err)[0] ?? 'Error';
}

export function describeSqsError(err: unknown): string {
  return `${errorName(err)}: ${describeError(err)}`;
}
