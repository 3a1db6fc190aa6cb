// The throttle behind the views' redraws (extension/model/changeThrottle.ts): a burst of changes
// is told at most once per interval, with every key that changed, the first at once and the last
// never lost. Node's fake timers stand in for the clock.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { ChangeThrottle } from '../../../extension/model/changeThrottle';

describe('ChangeThrottle', () => {
  let told: string[][];
  const record = (keys: ReadonlySet<string>) => told.push([...keys].sort());

  beforeEach(() => {
    told = [];
    mock.timers.enable({ apis: ['setTimeout'] });
  });
  afterEach(() => mock.timers.reset());

  test('the first change after a quiet interval is told at once, alone', () => {
    const throttle = new ChangeThrottle<string>(250, record);
    throttle.add('a');
    assert.deepEqual(told, [['a']]);
    mock.timers.tick(250);
    assert.deepEqual(told, [['a']], 'nothing more changed: nothing more is told');
    throttle.add('b');
    assert.deepEqual(told, [['a'], ['b']], 'quiet again: told at once');
  });

  test('a burst is told once per interval with every key that changed, and its last change is told', () => {
    const throttle = new ChangeThrottle<string>(250, record);
    // 1,000 changes a second for 1.1 s, on two keys, the second key only in the first 300 ms.
    for (let ms = 0; ms < 1100; ms++) {
      throttle.add('a');
      if (ms < 300) throttle.add('b');
      mock.timers.tick(1);
    }
    // at 0 ms the first change at once (b came after it), then at 250, 500, 750, 1000: each
    // interval's changes
    assert.deepEqual(told, [['a'], ['a', 'b'], ['a', 'b'], ['a'], ['a']]);
    mock.timers.tick(149);
    assert.equal(told.length, 5, 'not before the interval ends');
    mock.timers.tick(1);
    assert.equal(told.length, 6, 'the changes after the last notice are told when the interval ends');
    assert.deepEqual(told[5], ['a']);
    mock.timers.tick(1000);
    assert.equal(told.length, 6, 'and nothing after that');
  });

  test('interval 0: every change is told at once, alone (the behaviour without coalescing)', () => {
    const throttle = new ChangeThrottle<string>(0, record);
    throttle.add('a');
    throttle.add('a');
    throttle.add('b');
    assert.deepEqual(told, [['a'], ['a'], ['b']]);
  });

  test('disposed: pending changes are dropped, later ones ignored', () => {
    const throttle = new ChangeThrottle<string>(250, record);
    throttle.add('a');
    throttle.add('b');
    throttle.dispose();
    throttle.add('c');
    mock.timers.tick(1000);
    assert.deepEqual(told, [['a']]);
  });

  test('a bad interval is refused, naming it', () => {
    assert.throws(() => new ChangeThrottle<string>(-1, record), /intervalMs must be a number ≥ 0, not -1/);
  });
});
