// The source falling behind, judged from backlog readings every 5 s: troughs over a minute
// compared with the minute before, so neither noise nor a burst the agent catches up with counts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BacklogTrend } from '../../../agent/queueAgent/backlogTrend';

const PROBE = 5_000;
/** Feeds one reading per probe from `series(t)` for `seconds` and returns the last verdict. */
function run(trend: BacklogTrend, seconds: number, series: (s: number) => number | undefined, start = 0) {
  let verdict: Date | undefined;
  for (let at = start; at <= start + seconds * 1000; at += PROBE)
    verdict = trend.observe(at, series(at / 1000));
  return verdict;
}

test('a backlog that grows for two minutes is falling behind, dated a window back from when it was seen', () => {
  const trend = new BacklogTrend();
  // 50 msg/s more than the agent copies, on top of a chunk's noise.
  const since = run(trend, 130, (s) => 2000 + 50 * s + (s % 10 === 0 ? 900 : 0));
  assert.ok(since, 'behind');
  // First judged at 105 s (both windows covered, a quarter window's slack for late probes), and
  // dated a window before: the trough had been rising at least since then.
  assert.equal(since.getTime(), 105_000 - 60_000);
  // Still behind a minute later: the date does not move.
  assert.equal(run(trend, 60, (s) => 2000 + 50 * s, 135_000)?.getTime(), since.getTime());
});

test('a split that keeps up is never behind: a chunk in flight at every reading, spikes, a high but flat backlog', () => {
  assert.equal(
    run(new BacklogTrend(), 600, (s) => (s % 15 === 0 ? 5000 : 300)),
    undefined,
    'spikes',
  );
  assert.equal(
    run(new BacklogTrend(), 600, () => 950),
    undefined,
    'under the floor',
  );
  assert.equal(
    run(new BacklogTrend(), 600, (s) => 4000 + (s % 20)),
    undefined,
    'flat: never more than before',
  );
});

test('catching up ends it at once; so does the engine stopping', () => {
  const trend = new BacklogTrend();
  assert.ok(run(trend, 180, (s) => 1000 + 40 * s));
  // The agent catches up: the trough falls below the minute before's.
  assert.equal(
    run(trend, 30, (s) => 1000 + 40 * 180 - 200 * (s - 180), 185_000),
    undefined,
  );

  const stopped = new BacklogTrend();
  assert.ok(run(stopped, 180, (s) => 1000 + 40 * s));
  assert.equal(stopped.observe(185_000, undefined), undefined, 'not copying: the app reads its source');
  // Readings start again: a fresh two minutes are needed before it can say behind again.
  assert.equal(
    run(stopped, 90, (s) => 1000 + 40 * s, 190_000),
    undefined,
  );
});

test('a gap in the readings shorter than the windows is judged only once both windows are covered', () => {
  const trend = new BacklogTrend();
  // One minute of readings only: nothing to compare with.
  assert.equal(
    run(trend, 60, (s) => 2000 + 100 * s),
    undefined,
  );
});
