// Builders for the extension's view-model tests: QueueSplit objects as the API server returns
// them, and annotated workloads. Not a test file itself (no .test.ts suffix).
import type { QueueSplit, QueueSplitPhase } from '../../../core/crd/queueSplitSchema';
import type { AnyOfFilter } from '../../../core/filter';
import type { WorkloadInfo } from '../../../extension/model/types';

export interface SplitOptions {
  name?: string;
  owner?: string;
  workload?: string;
  kind?: 'Deployment' | 'StatefulSet';
  queues?: string[];
  filter?: Record<string, string>;
  /** spec.match (anyOf clauses) instead of spec.filter. */
  match?: AnyOfFilter;
  phase?: QueueSplitPhase;
  queueStatus?: {
    name: string;
    phase?: QueueSplitPhase;
    delivered?: number;
    lag?: number;
    sourceBacklog?: number;
  }[];
  delivered?: number;
  lag?: number;
  deleting?: boolean;
  conditions?: { type: string; status: 'True' | 'False' | 'Unknown'; reason: string; message: string }[];
  nextAction?: string;
}

export function split(options: SplitOptions = {}): QueueSplit {
  const owner = options.owner ?? 'alice';
  const phase = options.phase;
  return {
    apiVersion: 'queuesplit.dev/v1alpha1',
    kind: 'QueueSplit',
    metadata: {
      name: options.name ?? `qs-split-${owner}-orders`,
      namespace: 'team-a',
      uid: `uid-${options.name ?? owner}`,
      ...(options.deleting ? { deletionTimestamp: '2030-01-01T00:00:00Z' } : {}),
    },
    spec: {
      workload: { kind: options.kind ?? 'Deployment', name: options.workload ?? 'orders-app' },
      queues: options.queues ?? ['orders'],
      ...(options.match !== undefined
        ? { match: options.match as NonNullable<QueueSplit['spec']['match']> }
        : { filter: options.filter ?? { 'x-queue-split-user': owner } }),
      owner,
      routeId: 'abcdefghijklmnop',
      lease: { renewTime: '2030-01-01T00:00:00Z', durationSeconds: 60 },
    },
    ...(phase !== undefined || options.queueStatus !== undefined || options.conditions !== undefined
      ? {
          status: {
            ...(phase !== undefined ? { phase } : {}),
            ...(options.queueStatus !== undefined
              ? { queues: options.queueStatus.map((q) => ({ ...q, phase: q.phase ?? phase ?? 'Pending' })) }
              : {}),
            ...(options.delivered !== undefined ? { delivered: options.delivered } : {}),
            ...(options.lag !== undefined ? { lag: options.lag } : {}),
            ...(options.conditions !== undefined
              ? {
                  conditions: options.conditions.map((c) => ({
                    ...c,
                    lastTransitionTime: '2030-01-01T00:00:00Z',
                  })),
                }
              : {}),
            ...(options.nextAction !== undefined ? { nextAction: options.nextAction } : {}),
          },
        }
      : {}),
  };
}

export function workload(name = 'orders-app', queues = ['orders'], errors: string[] = []): WorkloadInfo {
  return {
    kind: 'Deployment',
    name,
    namespace: 'team-a',
    uid: `uid-${name}`,
    queues: queues.map((q) => ({
      name: q,
      provider: q.startsWith('k') ? 'kafka' : 'rabbitmq',
      source: `${q}-src`,
      container: 'app',
    })),
    errors,
  };
}

/** An annotated Deployment as the API server returns it. */
export function deploymentObject(
  name: string,
  annotation: string | undefined,
  env: { name: string; value?: string }[],
) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: 'team-a',
      uid: `uid-${name}`,
      ...(annotation !== undefined ? { annotations: { 'telepresence.io/queue-config': annotation } } : {}),
    },
    spec: { template: { spec: { containers: [{ name: 'app', env }] } } },
  };
}
