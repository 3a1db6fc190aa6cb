// Management-API preflight of a RabbitMQ source (docs/design.md §3, §7): a durable classic or quorum
// queue with no declaration arguments beyond its type. Streams, exclusive and auto-delete
// queues are refused: a stream is not consumed destructively, an exclusive queue belongs to
// one connection, an auto-delete queue vanishes with its last consumer.
import type { FieldError, Result } from '../../core/result';
import type { ManagementQueue } from './management';

export type SourceType = 'classic' | 'quorum';

export interface SourceFacts {
  readonly type: SourceType;
  readonly warnings: readonly string[];
}

export function checkSource(queue: string, info: ManagementQueue | undefined): Result<SourceFacts> {
  const path = 'source';
  if (!info) {
    return {
      ok: false,
      errors: [
        {
          path,
          problem: `queue ${queue} does not exist in this vhost`,
          fix: 'check the source env var of the workload and the vhost in the AMQP URL',
        },
      ],
    };
  }
  const errors: FieldError[] = [];
  if (info.type !== 'classic' && info.type !== 'quorum') {
    errors.push({
      path,
      problem: `queue ${queue} is a ${info.type} queue; only classic and quorum queues can be split`,
      fix:
        info.type === 'stream'
          ? 'streams are read non-destructively; split a classic or quorum queue instead'
          : 'use a classic or quorum queue',
    });
  }
  if (!info.durable) {
    errors.push({ path, problem: `queue ${queue} is not durable`, fix: 'declare the source durable' });
  }
  if (info.exclusive) {
    errors.push({
      path,
      problem: `queue ${queue} is exclusive to one connection`,
      fix: 'split a shared, non-exclusive queue',
    });
  }
  if (info.auto_delete) {
    errors.push({
      path,
      problem: `queue ${queue} is auto-delete: it would vanish when the application's consumer leaves`,
      fix: 'declare the source without auto-delete',
    });
  }
  const extra = Object.keys(info.arguments ?? {}).filter((key) => key !== 'x-queue-type');
  if (extra.length > 0) {
    errors.push({
      path,
      problem: `queue ${queue} has declaration arguments ${extra.join(', ')}; shadows could not reproduce their semantics`,
      fix: 'split a queue declared without arguments (policies are allowed)',
    });
  }
  if (errors.length > 0) return { ok: false, errors };
  const warnings = info.policy
    ? [
        `policy ${info.policy} applies to ${queue}; the shadows do not match it and do not inherit its settings`,
      ]
    : [];
  return { ok: true, value: { type: info.type as SourceType, warnings } };
}
