// The preflight's rights probe (agent/sqs/rights.ts): how SQS's answers to a DeleteMessage and a
// ChangeMessageVisibility with a handle no message has read as allowed or refused. The answers
// are the SDK's error shapes; that ElasticMQ answers an allowed probe with ReceiptHandleIsInvalid
// is shown by every conformance case, whose prepare runs the probe.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deniedOnSource, isAccessDenied } from '../../../agent/sqs/rights';

const sdkError = (name: string, status: number) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });

/** A client answering each command by its class name (cast where passed: the SDK's `send` is
 * overloaded, and the probe needs no more of it than this). */
const answering = (answers: Record<string, Error>) => ({
  send: (command: object) => Promise.reject(answers[command.constructor.name] ?? new Error('unexpected')),
});

test('a refused handle means allowed; AccessDenied means refused, named by action', async () => {
  const allowed = answering({
    DeleteMessageCommand: sdkError('ReceiptHandleIsInvalid', 400),
    ChangeMessageVisibilityCommand: sdkError('ReceiptHandleIsInvalid', 400),
  });
  assert.deepEqual(await deniedOnSource(allowed as never, 'https://sqs.eu-west-1.amazonaws.com/1/q'), []);
  const refused = answering({
    DeleteMessageCommand: sdkError('AccessDenied', 403),
    ChangeMessageVisibilityCommand: sdkError('ReceiptHandleIsInvalid', 400),
  });
  assert.deepEqual(await deniedOnSource(refused as never, 'https://sqs.eu-west-1.amazonaws.com/1/q'), [
    'sqs:DeleteMessage',
  ]);
});

test('AccessDenied is read from the name or the 403, whatever the protocol calls it', () => {
  assert.ok(isAccessDenied(sdkError('AccessDenied', 403)));
  assert.ok(isAccessDenied(sdkError('AccessDeniedException', 400)));
  assert.ok(isAccessDenied(sdkError('Whatever', 403)));
  assert.ok(!isAccessDenied(sdkError('ReceiptHandleIsInvalid', 400)));
  assert.ok(!isAccessDenied(new Error('socket hang up')));
});
