// The conformance suite against Kafka: every provider-neutral scenario, unchanged.
import { after } from 'node:test';
import { kafkaHarness } from './kafka/harness';
import { defineConformanceSuite } from './scenarios';

const harness = kafkaHarness();
after(() => harness.close());
defineConformanceSuite(harness);
