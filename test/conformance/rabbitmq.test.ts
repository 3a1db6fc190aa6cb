// test-order: first (the whole scenario suite on a quorum source: about 4 minutes)
// The conformance suite against RabbitMQ: a durable classic source and a quorum source (whose
// shadows become quorum queues too). The two run side by side: most of their time is spent
// waiting for broker statistics, not computing.
import { after, describe } from 'node:test';
import { rabbitHarness } from './rabbitmq/harness';
import { defineConformanceSuite } from './scenarios';

const harnesses = [rabbitHarness('classic'), rabbitHarness('quorum')];
after(() => Promise.all(harnesses.map((h) => h.close())));
describe('RabbitMQ sources', { concurrency: harnesses.length }, () => {
  for (const h of harnesses) defineConformanceSuite(h);
});
