// API errors in the agent's and controller's logs (agent/log.ts describeError): the
// server's Status message with its code, not client-node's dump of the whole response.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { describeError } from '../../../agent/log';

test('an API conflict reads as its code and the Status message, without response headers', () => {
  const status = {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: 'Operation cannot be fulfilled on deployments.apps "shop": the object has been modified',
    reason: 'Conflict',
    code: 409,
  };
  const err = new ApiException(
    409,
    'HTTP-Code: 409\nMessage: Unknown API Status Code!',
    JSON.stringify(status),
    {
      'audit-id': '00ea3350-9136-4340-9a6d-dcc93b1cc364',
    },
  );
  assert.equal(
    describeError(err),
    '409 Operation cannot be fulfilled on deployments.apps "shop": the object has been modified',
  );
});

test('any other error keeps its message', () => {
  assert.equal(
    describeError(new Error('connect ECONNREFUSED 10.0.0.1:443')),
    'connect ECONNREFUSED 10.0.0.1:443',
  );
  // Not a Status body: client-node's own message, whatever it wrote.
  assert.match(describeError(new ApiException(500, 'Internal error', 'not json', {})), /500/);
});
