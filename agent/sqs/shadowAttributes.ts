// The source attributes a shadow is created with, so the application (or a developer) sees a
// shadow behave as the source does (docs/providers/sqs.md "Identity"): visibility, retention,
// long polling, size limit, the redrive policy (same dead-letter queue, same maxReceiveCount:
// a poison message reaches it after as many of the application's attempts as without a split)
// and encryption settings. Not `DelaySeconds`: the source already delayed the message once, and
// a second delay in the shadow would change when the application sees it.
export const COPIED_ATTRIBUTES = [
  'VisibilityTimeout',
  'MessageRetentionPeriod',
  'ReceiveMessageWaitTimeSeconds',
  'MaximumMessageSize',
  'RedrivePolicy',
  'KmsMasterKeyId',
  'KmsDataKeyReusePeriodSeconds',
  'SqsManagedSseEnabled',
  // FIFO sources: shadows are FIFO queues with the source's deduplication settings.
  'FifoQueue',
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'FifoThroughputLimit',
] as const;

export interface ShadowAttributes {
  readonly attributes: Record<string, string>;
  readonly warnings: string[];
}

export function shadowAttributes(source: Readonly<Record<string, string>>): ShadowAttributes {
  const attributes: Record<string, string> = {};
  for (const name of COPIED_ATTRIBUTES) {
    const value = source[name];
    if (value !== undefined && value !== '' && !(name === 'FifoQueue' && value !== 'true'))
      attributes[name] = value;
  }
  const warnings: string[] = [];
  if (Number(source.DelaySeconds ?? 0) > 0) {
    warnings.push(
      `the source delays messages ${source.DelaySeconds} s; shadows do not delay them again (a copy is made once the delay has passed)`,
    );
  }
  if (source.RedrivePolicy) {
    const max = maxReceiveCount(source.RedrivePolicy);
    if (max !== undefined && max < 3) {
      warnings.push(
        `the source's maxReceiveCount is ${max}: a queue-agent restart between a copy and its delete counts one receive, which can send a message to the dead-letter queue`,
      );
    }
  }
  return { attributes, warnings };
}

/** The redrive policy's maxReceiveCount, when it parses. */
export function maxReceiveCount(redrivePolicy: string): number | undefined {
  try {
    const parsed = JSON.parse(redrivePolicy) as { maxReceiveCount?: unknown };
    const n = Number(parsed.maxReceiveCount);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** The visibility timeout shadows have (seconds; SQS's default when the source had none). */
export function visibilitySeconds(attributes: Readonly<Record<string, string>> | undefined): number {
  const n = Number(attributes?.VisibilityTimeout ?? 30);
  return Number.isFinite(n) ? n : 30;
}
