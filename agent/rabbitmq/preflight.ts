// Management-API preflight of a RabbitMQ source (docs/design.md §3, §7): a durable classic or quorum
// queue with no declaration arguments beyond its type. Streams, exclusive and auto-delete
// queues are refused: a stream is not consumed destructively, an exclusive queue belongs to
// one connection, an auto-delete queue vanishes with its last consumer. A policy (or operator
// policy) that decides a message's fate — dead-lettering, TTL, length limits, delivery limits —
// is refused as the same declaration arguments are: the shadows the app reads during a split do
// not inherit it, so a message the app rejects or lets expire would vanish instead of reaching
// the dead-letter exchange (README "What the shadows reproduce"). Policies that only place or
// store a queue are allowed.
import type { FieldError, Result } from '../../core/result';
import type { ManagementQueue } from './management';

export type SourceType = 'classic' | 'quorum';

export interface SourceFacts {
  readonly type: SourceType;
  readonly warnings: readonly string[];
}

/** Policy keys that change what happens to a message on the queue the app consumes. */
const FATE_POLICY_KEYS = [
  'dead-letter-exchange',
  'dead-letter-routing-key',
  'dead-letter-strategy',
  'message-ttl',
  'max-length',
  'max-length-bytes',
  'overflow',
  'delivery-limit',
];

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
      fix: 'split a queue declared without arguments',
    });
  }
  const policies = [info.policy, info.operator_policy].filter(
    (p): p is string => typeof p === 'string' && p !== '',
  );
  const fate = Object.keys(info.effective_policy_definition ?? {}).filter((key) =>
    FATE_POLICY_KEYS.includes(key),
  );
  if (fate.length > 0) {
    errors.push({
      path,
      problem: `queue ${queue} gets ${fate.join(', ')} from policy ${policies.join(' and ') || '(unnamed)'}; the shadows the application reads during a split would not apply them, so messages it rejects or lets expire would not be dead-lettered or limited as now`,
      fix: `split a queue no such policy applies to, or narrow the pattern of ${policies.join(' / ') || 'the policy'} so it does not match ${queue} (policies that only place or store a queue are allowed)`,
    });
  }
  if (errors.length > 0) return { ok: false, errors };
  const warnings =
    policies.length > 0
      ? [
          `policy ${policies.join(' and ')} applies to ${queue}; the shadows do not match it and do not inherit its settings (none of them decides a message's fate)`,
        ]
      : [];
  return { ok: true, value: { type: info.type as SourceType, warnings } };
}
