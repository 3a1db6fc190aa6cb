// Properties of filter semantics over generated filters and messages (fast-check).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  filtersOverlap,
  formatFilter,
  isAnyOf,
  matches,
  parseFilter,
  type HeaderFilter,
} from '../../../core/filter';

// Small alphabets so generated filters share keys and values often enough to be interesting.
const key = fc.constantFrom('user', 'team', 'region', 'x-queue-split-user', 'Ünï');
const value = fc.constantFrom('a', 'b', 'c', 'zoë', '1');
const filterArb = fc.dictionary(key, value, { maxKeys: 4 }).map((d): HeaderFilter => Object.freeze({ ...d }));
const headersArb = fc.dictionary(key, value, { maxKeys: 5 }).map((d) => new Map(Object.entries(d)));

test('overlap is symmetric', () => {
  fc.assert(fc.property(filterArb, filterArb, (a, b) => filtersOverlap(a, b) === filtersOverlap(b, a)));
});

test('if two filters do not overlap, no message matches both', () => {
  fc.assert(
    fc.property(filterArb, filterArb, headersArb, (a, b, headers) => {
      fc.pre(!filtersOverlap(a, b));
      return !(matches(a, headers) && matches(b, headers));
    }),
  );
});

test('if two filters overlap, the union of their pairs is a message matching both', () => {
  fc.assert(
    fc.property(filterArb, filterArb, (a, b) => {
      fc.pre(filtersOverlap(a, b));
      const headers = new Map(Object.entries({ ...a, ...b }));
      return matches(a, headers) && matches(b, headers);
    }),
  );
});

test('formatFilter output parses back to the same filter', () => {
  fc.assert(
    fc.property(filterArb, (filter) => {
      const round = parseFilter(formatFilter(filter));
      assert.ok(round.ok);
      assert.deepEqual(round.value, filter);
    }),
  );
});

test('parseFilter never throws and always returns a typed result, whatever it is given', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.array(fc.anything()), fc.anything(), fc.object()), (input) => {
      const result = parseFilter(input as Parameters<typeof parseFilter>[0]);
      if (result.ok) {
        assert.equal(typeof result.value, 'object');
        if (isAnyOf(result.value)) assert.ok(result.value.anyOf.length > 0);
        else for (const v of Object.values(result.value)) assert.equal(typeof v, 'string');
      } else {
        assert.ok(result.errors.length > 0);
        for (const e of result.errors) {
          assert.equal(typeof e.path, 'string');
          assert.ok(e.problem.length > 0 && e.fix.length > 0);
        }
      }
    }),
    { numRuns: 500 },
  );
});
