// Management-API preflight of a RabbitMQ source (docs/design.md §3, §7): a durable classic or quorum
// queue whose declaration arguments and effective policy the shadows can reproduce
// (shadowArguments.ts). Streams, exclusive and auto-delete queues are refused: a stream is not
// consumed destructively, an exclusive queue belongs to one connection, an auto-delete queue
// vanishes with its last consumer. Policy keys that only place, store or federate a queue are not
// inherited by the shadows; the preparation says so (README "What the shadows reproduce").
import type { FieldError, Result } from '../../core/result';
import type { ManagementQueue } from './management';
import { shadowArguments, type DerivedArguments } from './shadowArguments';

export type SourceType = 'classic' | 'quorum';

export interface SourceFacts {
  readonly type: SourceType;
  /** What every shadow is declared with. */
  readonly shadows: DerivedArguments;
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
  const type: SourceType = info.type === 'quorum' ? 'quorum' : 'classic';
  const derived = shadowArguments(queue, type, info);
  if (!derived.ok) errors.push(...derived.errors);
  if (errors.length > 0 || !derived.ok) return { ok: false, errors };
  const policies = [info.policy, info.operator_policy].filter(
    (p): p is string => typeof p === 'string' && p !== '',
  );
  const { notInherited } = derived.value;
  const warnings =
    notInherited.length > 0
      ? [
          `policy ${policies.join(' and ') || '(unnamed)'} gives ${queue} ${notInherited.join(', ')}, which the shadows do not take (none of them decides a message's fate)`,
        ]
      : [];
  return { ok: true, value: { type, shadows: derived.value, warnings } };
}
