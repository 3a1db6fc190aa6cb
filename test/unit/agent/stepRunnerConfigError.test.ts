// A queue-agent whose pod env cannot build an engine: the activation's rollback and cleanup are
// proven by "no engine ever ran" — but only when nothing was ever checkpointed, and never for
// the steps that would have done work.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentQueuePlan, DesiredState } from '../../../core/agentProtocol';
import type { WorkloadPhase } from '../../../core/state/phases';
import { silentLogger } from '../../../agent/log';
import { StepRunner } from '../../../agent/queueAgent/stepRunner';

function desired(step: WorkloadPhase, checkpoint?: unknown): DesiredState {
  const plan: AgentQueuePlan = {
    name: 'orders',
    provider: 'rabbitmq',
    source: 'orders',
    // Names no test environment sets: the engine cannot be built.
    env: { url: 'QS_UNIT_UNSET_AMQP_URL', managementUrl: 'QS_UNIT_UNSET_MANAGEMENT_URL' },
    epoch: 1,
    names: { appShadow: 'qs-rapp-orders-x', lockQueue: 'qs-lock-orders-x' },
    step,
    ...(checkpoint !== undefined ? { checkpoint } : {}),
  };
  return {
    apiVersion: 'queuesplit.dev/desired/v1',
    activationId: 'a/1',
    generation: 2,
    phase: step,
    queues: [plan],
    routes: [],
  };
}

async function outcome(step: WorkloadPhase, checkpoint?: unknown) {
  const runner = new StepRunner(silentLogger);
  try {
    return (await runner.reconcile(desired(step, checkpoint))).queues.orders?.outcome;
  } finally {
    await runner.close();
  }
}

test('rollback and cleanup of an engine that was never built are proven by that alone', async () => {
  for (const step of ['ABORTING_ACTIVATION', 'CLEANING_UP'] as const) {
    const o = await outcome(step);
    assert.equal(o?.kind, 'done', step);
    assert.match(
      o?.kind === 'done' ? o.evidence : '',
      /no engine ever ran for orders .*QS_UNIT_UNSET_AMQP_URL/,
    );
  }
});

test('a step that does work, or an engine that once checkpointed, still fails on a config error', async () => {
  assert.equal((await outcome('PREPARING'))?.kind, 'rejected');
  assert.equal((await outcome('ABORTING_ACTIVATION', { provider: 'rabbitmq', data: {} }))?.kind, 'rejected');
});
