// Proofs without an exclusive consumer (docs/providers/sqs.md "Proofs without an exclusive
// consumer"): SQS cannot say who consumes a queue and its counts are approximate, so a fact is
// proved by stable samples over a window longer than the queue's visibility timeout (messages a
// consumer held come back within it) plus how long the counts may lag.
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { sleep } from '../engine/timing';
import { isQueueMissing } from './errors';

export interface QueueCounts {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

export const NO_QUEUE = 'missing' as const;

export async function readCounts(client: SQSClient, url: string): Promise<QueueCounts | typeof NO_QUEUE> {
  try {
    const { Attributes: a = {} } = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
    );
    return {
      visible: Number(a.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
      delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
    };
  } catch (err) {
    if (isQueueMissing(err)) return NO_QUEUE;
    throw err;
  }
}

export const describeCounts = (c: QueueCounts): string =>
  `${c.visible} visible, ${c.inFlight} in flight, ${c.delayed} delayed`;

export type Proof =
  { readonly ok: true; readonly missing: boolean } | { readonly ok: false; readonly counts: QueueCounts };

/**
 * True once `accept` held for every sample over `windowMs` (the queue missing counts as empty
 * when `missingIsEmpty`). The first sample it rejects ends the proof at once: the caller decides
 * whether to act (move what is visible) or answer pending; the controller retries.
 */
export async function proveStable(
  client: SQSClient,
  url: string,
  accept: (c: QueueCounts) => boolean,
  windowMs: number,
  pollMs: number,
): Promise<Proof> {
  const from = Date.now();
  for (;;) {
    const counts = await readCounts(client, url);
    if (counts === NO_QUEUE) return { ok: true, missing: true };
    if (!accept(counts)) return { ok: false, counts };
    if (Date.now() - from >= windowMs) return { ok: true, missing: false };
    await sleep(Math.min(pollMs, Math.max(0, windowMs - (Date.now() - from))));
  }
}

export const isEmpty = (c: QueueCounts): boolean => c.visible === 0 && c.inFlight === 0 && c.delayed === 0;
