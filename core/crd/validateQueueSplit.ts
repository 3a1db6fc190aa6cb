// Validation of a QueueSplit's spec as the controller reads it: the schema, plus the filter
// rules of core/filter (which a CRD schema cannot express).
import { parseFilter, type RouteFilter } from '../filter';
import { fail, fieldError, guarded, ok, type Result } from '../result';
import { issuesToFieldErrors } from '../zodIssues';
import { queueSplitSpecSchema, type QueueSplitSpec } from './queueSplitSchema';

export interface ValidQueueSplitSpec extends Omit<QueueSplitSpec, 'filter' | 'match'> {
  /** spec.filter or spec.match, read as one filter. */
  filter: RouteFilter;
}

export { filterSpecFields, specFilter } from './splitFilter';

export function validateQueueSplitSpec(value: unknown): Result<ValidQueueSplitSpec> {
  return guarded('spec', () => validateSpec(value));
}

function validateSpec(value: unknown): Result<ValidQueueSplitSpec> {
  const parsed = queueSplitSpecSchema.safeParse(value);
  if (!parsed.success)
    return fail(issuesToFieldErrors(parsed.error.issues, queueSplitSpecSchema, value, 'spec'));
  // The raw value, not zod's output: zod drops a "__proto__" key, which would widen the filter.
  const raw = value as {
    filter?: Readonly<Record<string, unknown>>;
    match?: Readonly<Record<string, unknown>>;
  };
  if ((raw.filter === undefined) === (raw.match === undefined))
    return fail([
      fieldError(
        'spec',
        'needs exactly one of filter and match.',
        'Set filter for exact header values, or match for anyOf clauses.',
      ),
    ]);
  const filter =
    raw.match !== undefined ? parseFilter(raw.match, 'spec.match') : parseFilter(raw.filter!, 'spec.filter');
  if (!filter.ok) return filter;
  const { match: _match, ...rest } = parsed.data;
  return ok({ ...rest, filter: filter.value });
}

/** When the lease runs out (ms since the epoch), or NaN for an unreadable renewTime. */
export function leaseExpiry(spec: Pick<QueueSplitSpec, 'lease'>): number {
  return Date.parse(spec.lease.renewTime) + spec.lease.durationSeconds * 1000;
}
