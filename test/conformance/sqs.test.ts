// The conformance suite against SQS (ElasticMQ in the test environment): a standard source queue.
// FIFO sources are refused by the engine (agent/sqs/config.ts), so there is no FIFO harness.
import { after, describe } from 'node:test';
import { sqsHarness } from './sqs/harness';
import { defineConformanceSuite } from './scenarios';

const harness = sqsHarness();
after(() => harness.close());
describe('SQS sources', () => {
  defineConformanceSuite(harness);
});
