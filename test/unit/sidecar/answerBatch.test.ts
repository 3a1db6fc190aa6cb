// A busy stream's acks and rejects go in few frames (sidecar/answerBatch.ts): each waits a few
// milliseconds for others, a batch at its cap goes at once, and stopping sends what waits.
import assert from 'node:assert/strict';
import { test, mock } from 'node:test';
import { AnswerBatch, type Answers } from '../../../sidecar/answerBatch';

function batch(maxTags = 4): { answers: AnswerBatch; sent: Answers[] } {
  const sent: Answers[] = [];
  return { answers: new AnswerBatch({ delayMs: 5, maxTags, send: (a) => sent.push(a) }), sent };
}

test('answers given within the delay travel in one frame, acks and rejects apart, each tag once', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const { answers, sent } = batch(10);
    answers.add('ack', 1);
    mock.timers.tick(2);
    answers.add('reject', 2);
    answers.add('ack', 3);
    assert.equal(sent.length, 0, 'nothing before the first answer waited its delay');
    mock.timers.tick(3);
    assert.deepEqual(sent, [{ acks: [1, 3], rejects: [2] }]);
    mock.timers.tick(100);
    assert.equal(sent.length, 1, 'no empty frame follows');
    answers.add('ack', 4);
    mock.timers.tick(5);
    assert.deepEqual(sent[1], { acks: [4], rejects: [] }, 'a lone answer waits no longer than the delay');
  } finally {
    mock.timers.reset();
  }
});

test('a batch at its cap goes at once, so the agent’s window never waits on the delay', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const { answers, sent } = batch(3);
    for (const tag of [1, 2, 3, 4]) answers.add('ack', tag);
    assert.deepEqual(sent, [{ acks: [1, 2, 3], rejects: [] }], 'the cap sent without a tick');
    mock.timers.tick(5);
    assert.deepEqual(sent[1], { acks: [4], rejects: [] });
  } finally {
    mock.timers.reset();
  }
});

test('stopping sends what waits at once; a dropped stream’s batch is never sent', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const { answers, sent } = batch(10);
    answers.add('ack', 7);
    answers.flush();
    assert.deepEqual(sent, [{ acks: [7], rejects: [] }]);
    const dropped = batch(10);
    dropped.answers.add('ack', 8);
    dropped.answers.cancel();
    mock.timers.tick(50);
    assert.equal(dropped.sent.length, 0, 'the messages of a dropped stream come again instead');
  } finally {
    mock.timers.reset();
  }
});
