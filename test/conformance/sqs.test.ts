// test-order: first (the scenario suite on a standard and a FIFO source side by side: about 2.5 minutes)
// The conformance suite against SQS (ElasticMQ in the test environment): a standard source queue
// and a FIFO one (whose shadows are FIFO queues). The two run side by side: most of their time
// is spent waiting out proof windows, not computing.
import { after, describe } from 'node:test';
import { sqsHarness } from './sqs/harness';
import { defineConformanceSuite } from './scenarios';

const harnesses = [sqsHarness(), sqsHarness({ fifo: true })];
after(() => Promise.all(harnesses.map((h) => h.close())));
describe('SQS sources', { concurrency: harnesses.length }, () => {
  for (const h of harnesses) defineConformanceSuite(h);
});
