// The provider-neutral conformance suite: one scenario body per behaviour, run against every
// provider harness (docs/design.md §5 is what it proves).
import { describe } from 'node:test';
import type { ProviderHarness } from '../harness';
import { crashScenarios } from './crash';
import { fencingScenarios } from './fencing';
import { fieldScenarios } from './fields';
import { filterScenarios } from './filters';
import { lifecycleScenarios } from './lifecycle';
import { recoveryScenarios } from './recovery';
import { routingScenarios } from './routing';
import { soakScenarios } from './soak';

// Two scenarios at a time: each has resources of its own (Topology), and they spend their time
// waiting on the broker (statistics, proofs), not computing.
const SCENARIOS_AT_ONCE = 2;

export function defineConformanceSuite(h: ProviderHarness): void {
  describe(`engine conformance: ${h.name}`, { concurrency: SCENARIOS_AT_ONCE }, () => {
    routingScenarios(h);
    filterScenarios(h);
    fieldScenarios(h);
    crashScenarios(h);
    fencingScenarios(h);
    lifecycleScenarios(h);
    recoveryScenarios(h);
    soakScenarios(h);
  });
}
