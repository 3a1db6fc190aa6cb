// core's overlap check explains as data (core/routeOverlap.ts explainOverlap): which two routes,
// the decision (a witness message, or the cause of an undecided pair) and the separating change.
// The controller's and the sidecar's English (describeOverlap, overlapError) is written from that
// structure; the extension words the same structure in the user's language.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideOverlap, parseFilter, type RouteFilter } from '../../../core/filter';
import { describeOverlap, explainOverlap, overlapError } from '../../../core/routeOverlap';

function filter(text: string): RouteFilter {
  const parsed = parseFilter(text);
  assert.ok(parsed.ok, text);
  return parsed.value;
}

test('an overlap: the routes, the witness headers and the fix as data; the English from them', () => {
  const route = { routeId: 'new', filter: filter('team=blue') };
  const other = { routeId: 'bob', filter: filter('x-queue-split-user=bob') };
  const explanation = explainOverlap(route, other);
  assert.ok(explanation);
  assert.equal(explanation.route, route);
  assert.equal(explanation.other, other);
  assert.equal(explanation.decision.kind, 'overlap');
  assert.deepEqual(explanation.decision.kind === 'overlap' ? explanation.decision.witness : undefined, {
    headers: [
      ['team', 'blue'],
      ['x-queue-split-user', 'bob'],
    ],
    body: undefined,
  });
  assert.deepEqual(explanation.fix, {
    kind: 'addHeader',
    route: 'new',
    key: 'x-queue-split-user',
    notValue: 'bob',
  });
  const words = describeOverlap(explanation);
  assert.match(words.problem, /^route "new" with filter "team=blue" overlaps route "bob"/);
  assert.match(
    words.problem,
    /a message with headers team="blue", x-queue-split-user="bob" would match both/,
  );
  assert.deepEqual(overlapError('filter', route, other), { path: 'filter', ...words });
});

test('an undecided pair: its cause as data, no text in the decision; disjoint: no explanation', () => {
  const route = { routeId: 'member', filter: filter('baggage:user=bob') };
  const other = { routeId: 'raw', filter: filter('has(baggage)') };
  const decision = decideOverlap(route.filter, other.filter);
  assert.equal(decision.kind, 'undecided');
  assert.equal('reason' in decision, false, 'the decision is data; describeCause words it');
  const explanation = explainOverlap(route, other, decision);
  assert.deepEqual(explanation?.decision, decision);
  assert.match(describeOverlap(explanation!).problem, /parts of the same baggage header/);
  const blue = { routeId: 'blue', filter: filter('team=blue') };
  assert.equal(explainOverlap(blue, { routeId: 'red', filter: filter('team=red') }), undefined);
});
