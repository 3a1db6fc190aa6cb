// Whose split is whose, and how a filter may be shown. Filter values are header values: the UI
// shows them only on the user's own splits, logs never show them (keys only).
import { filterKeys as keysOf, formatFilter, isEmptyFilter, type HeaderFilter } from '../../core/filter';
import type { QueueSplit } from './types';

export function isMine(split: QueueSplit, owner: string): boolean {
  return split.spec.owner === owner;
}

/** `k=v,k2=v2` for the owner; `k=…,k2=…` for anybody else's filter. */
export function filterForDisplay(filter: HeaderFilter, mine: boolean): string {
  if (isEmptyFilter(filter)) return '(all messages)';
  return mine ? formatFilter(filter) : filterKeys(filter);
}

/** For logs: the keys only, values elided. */
export function filterKeys(filter: HeaderFilter): string {
  if (isEmptyFilter(filter)) return '(all messages)';
  return keysOf(filter)
    .map((key) => `${key}=…`)
    .join(',');
}
