// Shadow queues: declared durable with the source's queue type and nothing else; removed only
// loss-proof. Classic queues have a conditional delete (if-empty, if-unused) that the broker
// checks atomically. Quorum queues reject it (540 NOT_IMPLEMENTED, which closes the whole
// connection), so a quorum shadow proven empty is retained as cleanup-pending, never deleted
// unconditionally.
import type { RetainedResource } from '../engine/contract';
import { replyCode, ReplyCode } from './amqpErrors';
import type { SourceType } from './preflight';
import type { Link } from './session';

export type DeclareResult = { ok: true } | { ok: false; problem: string };

export async function declareShadow(link: Link, name: string, type: SourceType): Promise<DeclareResult> {
  try {
    await link.withChannel('declare', (ch) =>
      ch.assertQueue(name, { durable: true, arguments: { 'x-queue-type': type } }),
    );
    return { ok: true };
  } catch (err) {
    if (replyCode(err) === ReplyCode.PRECONDITION_FAILED) {
      return {
        ok: false,
        problem: `queue ${name} already exists with a different declaration (not a durable ${type} queue)`,
      };
    }
    throw err;
  }
}

export type RemoveResult =
  | { kind: 'deleted' }
  | { kind: 'retained'; retained: RetainedResource }
  | { kind: 'refused'; problem: string };

/** Call only after proving the shadow idle (empty, no unacked, no consumers). */
export async function removeShadow(
  link: Link,
  name: string,
  type: SourceType,
  routeId: string | undefined,
): Promise<RemoveResult> {
  if (type === 'quorum') {
    return {
      kind: 'retained',
      retained: {
        kind: 'shadow',
        name,
        ...(routeId === undefined ? {} : { routeId }),
        reason:
          'quorum queues have no conditional delete; verified empty and unused, kept as cleanup-pending',
        verifiedEmptyAt: new Date().toISOString(),
      },
    };
  }
  try {
    await link.withChannel('delete', (ch) => ch.deleteQueue(name, { ifEmpty: true, ifUnused: true }));
    return { kind: 'deleted' };
  } catch (err) {
    const code = replyCode(err);
    if (code === ReplyCode.NOT_FOUND) return { kind: 'deleted' };
    if (code === ReplyCode.PRECONDITION_FAILED) {
      return {
        kind: 'refused',
        problem: `the broker refused to delete ${name}: it is not empty or has a consumer`,
      };
    }
    throw err;
  }
}
