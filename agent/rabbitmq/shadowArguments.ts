// What a shadow is declared with, so that the application (and the developer) meet the source's
// rules while they read shadows (README "What the shadows reproduce", docs/design.md §7):
// dead-lettering (exchange, routing key, strategy), TTL, length limits and overflow, priority,
// delivery limit, single active consumer, and the source's storage and placement settings.
//
// - From the source's declaration arguments and from its effective policy (policy and operator
//   policy merged, as the management API reports them). A shadow has its own name, which the
//   source's policy pattern does not match, so what the policy gives the source becomes the
//   shadow's declaration argument. Precedence as RabbitMQ applies it: for the numeric limits the
//   lower of argument and policy holds; for the others the argument wins over the policy.
// - Copies go through their destinations' exchanges with the producer's routing key (routing.ts), so a
//   message dead-lettered from a shadow without `x-dead-letter-routing-key` is routed by the key
//   its producer used, as from the source.
// - `x-overflow: reject-publish-dlx` becomes `reject-publish` on a shadow: the shadow refusing a
//   copy makes the engine keep that message in the source (unacked, retried), so the source fills
//   and applies its own rule to the producer's publishes. Dead-lettering the refused copy would
//   put a message in the dead-letter exchange that the source still holds.
// - `x-expires` (and the `expires` policy key) is not copied: a shadow that expired would delete
//   the messages it holds, and the source, which the engine consumes throughout, never expires
//   during a split.
// - Any other argument is one whose semantics this engine does not know: refused up front, named.
import type { FieldError, Result } from '../../core/result';
import type { ManagementQueue } from './management';

export type ArgumentValue = string | number | boolean;
export type ShadowArguments = Readonly<Record<string, ArgumentValue>>;

/** Declaration arguments copied to every shadow as the source has them. */
const COPIED = [
  'x-queue-type',
  'x-dead-letter-exchange',
  'x-dead-letter-routing-key',
  'x-dead-letter-strategy',
  'x-message-ttl',
  'x-max-length',
  'x-max-length-bytes',
  'x-overflow',
  'x-max-priority',
  'x-delivery-limit',
  'x-single-active-consumer',
  'x-queue-mode',
  'x-queue-version',
  'x-queue-master-locator',
  'x-queue-leader-locator',
  'x-quorum-initial-group-size',
  'x-quorum-target-group-size',
  'x-max-in-memory-length',
  'x-max-in-memory-bytes',
];
/** Declaration arguments a shadow leaves out on purpose (above). */
const NOT_COPIED = ['x-expires'];

/** Policy keys that decide a message's fate, and how a policy value meets an argument. */
const POLICY_FATE: Readonly<Record<string, 'argument-wins' | 'lower-wins'>> = {
  'dead-letter-exchange': 'argument-wins',
  'dead-letter-routing-key': 'argument-wins',
  'dead-letter-strategy': 'argument-wins',
  overflow: 'argument-wins',
  'message-ttl': 'lower-wins',
  'max-length': 'lower-wins',
  'max-length-bytes': 'lower-wins',
  'delivery-limit': 'lower-wins',
};

export interface DerivedArguments {
  readonly arguments: ShadowArguments;
  /** Policy keys that became shadow arguments. */
  readonly fromPolicy: readonly string[];
  /** Policy keys the shadows do not take (placement, storage, federation, expiry). */
  readonly notInherited: readonly string[];
}

export function shadowArguments(
  queue: string,
  type: 'classic' | 'quorum',
  info: Pick<ManagementQueue, 'arguments' | 'effective_policy_definition'>,
): Result<DerivedArguments> {
  const args: Record<string, ArgumentValue> = { 'x-queue-type': type };
  const errors: FieldError[] = [];
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(info.arguments ?? {})) {
    if (key === 'x-queue-type' || NOT_COPIED.includes(key)) continue;
    if (!COPIED.includes(key)) {
      unknown.push(key);
      continue;
    }
    if (!isArgumentValue(value)) {
      errors.push({
        path: 'source',
        problem: `queue ${queue} has argument ${key} of a kind a shadow cannot be declared with (${typeof value})`,
        fix: `declare ${queue} with ${key} as a string, number or boolean`,
      });
      continue;
    }
    args[key] = value;
  }
  if (unknown.length > 0) {
    errors.push({
      path: 'source',
      problem: `queue ${queue} has declaration arguments ${unknown.join(', ')} whose semantics a shadow cannot be shown to reproduce`,
      fix: `split a queue declared without ${unknown.join(', ')} (arguments the shadows reproduce: ${COPIED.filter((k) => k !== 'x-queue-type').join(', ')})`,
    });
  }
  const fromPolicy: string[] = [];
  const notInherited: string[] = [];
  for (const [key, value] of Object.entries(info.effective_policy_definition ?? {})) {
    const rule = POLICY_FATE[key];
    if (!rule) {
      notInherited.push(key);
      continue;
    }
    const argKey = `x-${key}`;
    const declared = args[argKey];
    if (!isArgumentValue(value)) continue; // RabbitMQ validates policy values; nothing to take.
    if (declared === undefined) {
      args[argKey] = value;
      fromPolicy.push(key);
    } else if (rule === 'lower-wins' && typeof value === 'number' && typeof declared === 'number') {
      if (value < declared) {
        args[argKey] = value;
        fromPolicy.push(key);
      }
    }
  }
  if (args['x-overflow'] === 'reject-publish-dlx') args['x-overflow'] = 'reject-publish';
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, value: { arguments: args, fromPolicy, notInherited } };
}

/** The same declaration (what RabbitMQ would accept as a redeclare). */
export function sameArguments(a: ShadowArguments, b: ShadowArguments): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => a[k] === b[k]);
}

/** The arguments a shadow of a split recorded before shadows carried the source's (format 1). */
export function typeOnly(type: 'classic' | 'quorum'): ShadowArguments {
  return { 'x-queue-type': type };
}

/** For logs and evidence: the argument names, never their values' meaning beyond the name. */
export function describeArguments(args: ShadowArguments): string {
  const names = Object.keys(args).filter((k) => k !== 'x-queue-type');
  return names.length > 0 ? names.join(', ') : 'no arguments beyond the type';
}

function isArgumentValue(value: unknown): value is ArgumentValue {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}
