// Which exchange a RabbitMQ copy is published through (agent/rabbitmq/routing.ts): a session
// shadow's own, so the broker's routing cost does not grow with the routes; the routing exchange
// for the source (a user's name) and the application shadow.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { copyExchange } from '../../../agent/rabbitmq/routing';

const routingExchange = 'qs-rapp-orders-aaaaaaaaaaaaaaaaaaaa';
const source = 'orders';

test('a copy to a session shadow goes through the exchange named like the shadow', () => {
  const shadow = 'qs-rses-orders-bbbbbbbbbbbbbbbbbbbb';
  assert.equal(copyExchange(routingExchange, source, shadow), shadow);
});

test('a copy to the source or the application shadow goes through the routing exchange', () => {
  assert.equal(copyExchange(routingExchange, source, source), routingExchange);
  assert.equal(copyExchange(routingExchange, source, routingExchange), routingExchange);
});
