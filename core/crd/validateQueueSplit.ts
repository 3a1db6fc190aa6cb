// Validation of a QueueSplit's spec as the controller reads it: the schema, plus the filter
// rules of core/filter (which a CRD schema cannot express).
import { parseFilter, type HeaderFilter } from '../filter';
import { fail, guarded, ok, type Result } from '../result';
import { issuesToFieldErrors } from '../zodIssues';
import { queueSplitSpecSchema, type QueueSplitSpec } from './queueSplitSchema';

export interface ValidQueueSplitSpec extends QueueSplitSpec {
  filter: HeaderFilter;
}

export function validateQueueSplitSpec(value: unknown): Result<ValidQueueSplitSpec> {
  return guarded('spec', () => validateSpec(value));
}

function validateSpec(value: unknown): Result<ValidQueueSplitSpec> {
  const parsed = queueSplitSpecSchema.safeParse(value);
  if (!parsed.success)
    return fail(issuesToFieldErrors(parsed.error.issues, queueSplitSpecSchema, value, 'spec'));
  // The raw value, not zod's output: zod drops a "__proto__" key, which would widen the filter.
  const rawFilter = (value as { filter: Readonly<Record<string, unknown>> }).filter;
  const filter = parseFilter(rawFilter, 'spec.filter');
  if (!filter.ok) return filter;
  return ok({ ...parsed.data, filter: filter.value });
}

/** When the lease runs out (ms since the epoch), or NaN for an unreadable renewTime. */
export function leaseExpiry(spec: Pick<QueueSplitSpec, 'lease'>): number {
  return Date.parse(spec.lease.renewTime) + spec.lease.durationSeconds * 1000;
}
