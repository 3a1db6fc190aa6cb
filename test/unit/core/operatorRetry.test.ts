// An operator's retry annotation becomes exactly the retries the phase machine accepts: the
// degraded workflow and each degraded route, and nothing when nothing is degraded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryEvents, retryHint, RETRY_ANNOTATION } from '../../../core/state/operatorRetry';
import { degradedReport } from '../../../core/state/phaseActions';
import { transition } from '../../../core/state/transition';
import { at } from './splitFixtures';

test('a degraded workflow is retried from the phase it degraded in', () => {
  const degraded = at('DEGRADED');
  assert.deepEqual(retryEvents(degraded), [{ type: 'retryRequested' }]);
  const retried = transition(degraded, retryEvents(degraded)[0]!);
  assert.equal(retried.outcome, 'applied');
  assert.equal(retried.state.phase, 'ABORTING_ACTIVATION');
});

test('a degraded route is retried by its id; an active split has nothing to retry', () => {
  assert.deepEqual(retryEvents(at('ACTIVE')), []);
  const routeDegraded = transition(at('ACTIVE_ROUTE_DRAINING'), {
    type: 'routeDrained',
    routeId: 'r1',
    proven: false,
    evidence: 'session group still has a member',
  }).state;
  assert.deepEqual(retryEvents(routeDegraded), [{ type: 'retryRequested', routeId: 'r1' }]);
  assert.equal(transition(routeDegraded, retryEvents(routeDegraded)[0]!).state.routes[0]!.phase, 'DRAINING');
});

test('the degraded report tells the operator the exact retry command', () => {
  const report = degradedReport(at('DEGRADED'));
  assert.equal(report.type, 'reportDegraded');
  const hint = retryHint(at('DEGRADED').workload);
  assert.ok(report.type === 'reportDegraded' && report.nextAction.endsWith(hint));
  assert.match(hint, new RegExp(`annotate deployment/\\S+ ${RETRY_ANNOTATION}=now$`));
});

test('a degraded route stays degraded when its split is deleted: only the retry drains it again', () => {
  const routeDegraded = transition(at('ACTIVE_ROUTE_DRAINING'), {
    type: 'routeDrained',
    routeId: 'r1',
    proven: false,
    evidence: 'a consumer is still attached',
  }).state;
  const deleted = transition(routeDegraded, { type: 'routeDeleted', routeId: 'r1' });
  assert.equal(deleted.outcome, 'ignored');
  assert.equal(deleted.state.routes[0]!.phase, 'DEGRADED');
});
