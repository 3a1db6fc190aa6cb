// A split whose queue-agent cannot start (docs/design.md §6, "Refused activations"): the helpers
// of agent-start-failures.test.ts (what needs its own controller settings, serial) and
// agent-start-refused.test.ts (what a namespace alone causes, beside the other files).
import assert from 'node:assert/strict';
import { AppsV1Api } from '@kubernetes/client-node';
import { RETRY_ANNOTATION } from '../../core/state/operatorRetry';
import type { ClusterFixture } from './clusterFixture';
import { ids, publishTo, rabbitApp, waitForAppReceived } from './rabbitSplit';
import { operatorRetry, removeSplit, splitFor, waitForSplitPhase } from './splits';

export interface Started {
  workload: string;
  source: string;
  split: string;
}

/** In the namespace of a cluster fixture with RabbitMQ (test/support/clusterFixture.ts). */
export class AgentStartFailures {
  constructor(private readonly fx: ClusterFixture) {}

  /** A RabbitMQ app and noor's split of it; `beforeSplit` gets the workload's uid. */
  async startSplit(workload: string, beforeSplit?: (uid: string) => Promise<void>): Promise<Started> {
    const { kc, namespace } = this.fx;
    const source = await rabbitApp(this.fx, workload);
    const d = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: workload, namespace });
    await beforeSplit?.(d.metadata!.uid!);
    const split = await splitFor(kc, namespace, { workload, user: 'noor' });
    return { workload, source, split: split.metadata.name };
  }

  /** Degraded naming `cause`, the app untouched and still consuming; returns the status message. */
  async assertDegradedKeepingMessages(s: Started, cause: RegExp, timeoutMs: number): Promise<string> {
    const { kc, namespace, ch } = this.fx;
    const degraded = await waitForSplitPhase(kc, namespace, s.split, 'Degraded', timeoutMs);
    const message = degraded.status?.conditions?.[0]?.message ?? '';
    assert.match(message, /the queue-agent cannot run/, `the step names the agent: ${message}`);
    assert.match(message, cause, `the cause is named: ${message}`);
    assert.match(
      message,
      new RegExp(`annotate deployment/${s.workload} ${RETRY_ANNOTATION}=now`),
      'the retry',
    );
    assert.ok(!message.includes('noor'), 'no header value in the status');
    const app = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: s.workload, namespace });
    assert.equal(app.spec?.replicas, 1, 'the app was never quiesced');
    assert.ok(
      !JSON.stringify(app.spec?.template.spec?.containers[0]?.env).includes('qs-'),
      'the app was never redirected',
    );
    const plain = ids(s.source, 'plain', 3);
    const mine = ids(s.source, 'noor', 2);
    await publishTo(ch, s.source, plain);
    await publishTo(ch, s.source, mine, 'noor');
    await waitForAppReceived(
      'the app still consumes every message of its source',
      [...plain, ...mine],
      30_000,
      s.source,
    );
    return message;
  }

  /** The operator's retry once the cause is fixed: the abort completes and the split ends. */
  async retryAndEnd(s: Started): Promise<void> {
    const { kc, namespace } = this.fx;
    await operatorRetry(kc, namespace, s.workload);
    const ended = await waitForSplitPhase(kc, namespace, s.split, 'Failed', 120_000);
    assert.match(ended.status?.conditions?.[0]?.message ?? '', /Nothing was lost/);
    await removeSplit(kc, namespace, s.split, 60_000);
  }
}
