// The overlap explanation of the filter input is composed in the user's language whole: the
// witness, the reason an overlap is undecided and the separating change are data from core/, worded
// by extension/model/filterOverlap.ts through l10n. With a bundle that upper-cases every English
// text (placeholders kept, ./shoutedBundle.ts), no English template words may remain lower-case in
// the result.
import './shoutedBundle';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkFilter } from '../../../extension/model/startSplit';
import type { AnyOfFilter } from '../../../core/filter';
import { split as splitOf } from './fixtures';

const split = (owner: string, name: string, match: AnyOfFilter | Record<string, string>) =>
  'anyOf' in match
    ? splitOf({ owner, name, phase: 'Active', match: match as AnyOfFilter })
    : splitOf({ owner, name, phase: 'Active', filter: match as Record<string, string> });

const context = (...splits: ReturnType<typeof split>[]) => ({
  workload: { kind: 'Deployment' as const, name: 'orders-app' },
  queues: ['orders'],
  owner: 'alice',
  splits,
});

/** English words of the explanation's templates; none may survive translation. */
const ENGLISH =
  /overlaps|may overlap|the split of|your split|would match both|a message with|no headers|their values|your new split|a value other than|so that no message|to each of its alternatives|already takes|no term added|one filter reads|takes every message|give your new split/;

test('every kind of overlap explanation comes out of the bundle, values and keys as typed', () => {
  const bob = (match: AnyOfFilter | Record<string, string>) => split('bob', 'qs-bob', match);
  const mine = (match: AnyOfFilter | Record<string, string>) => split('alice', 'qs-mine', match);
  const cases: [string, ReturnType<typeof split>][] = [
    ['x-queue-split-user=bob', bob({ anyOf: [{ 'x-queue-split-user': { equals: 'bob' } }] })], // equality: change value
    ['team=blue', bob({ anyOf: [{ 'x-queue-split-user': { equals: 'bob' } }] })], // equality: add header
    ['tenant^=b', bob({ anyOf: [{ region: { equals: 'eu' }, tenant: { prefix: 'bob-' } }] })], // add term, hidden values
    ['x=1 or tenant^=b', bob({ anyOf: [{ tenant: { prefix: 'bob-' } }, { y: { equals: 'y' } }] })], // alternatives
    ['baggage:queue-split-user=alice', bob({ anyOf: [{ baggage: { exists: true } }] })], // undecided
    ['tenant~="alice-[0-9]+"', mine({ anyOf: [{ tenant: { prefix: 'alice-' } }] })], // no term, my own
    ['body:$.customer.id^=c-1', mine({ anyOf: [{ 'body:$.customer.id': { regex: 'c-[0-9]+' } }] })], // body witness
    ['', bob({ anyOf: [{ team: { equals: 'red' } }] })], // empty filter
    ['team=red', bob({})], // theirs takes every message
  ];
  for (const [typed, other] of cases) {
    const error = checkFilter(typed, context(other)).error;
    assert.ok(error, `${typed}: an overlap is reported`);
    assert.doesNotMatch(error, ENGLISH, `${typed}: English left in ${error}`);
    assert.match(error, /OVERLAP/, `${typed}: the frame is translated: ${error}`);
  }
});
