// "Show Split Details": the QueueSplit and the state of this window's sidecar for it, as YAML.
// Another owner's filter values are masked (they are their header values); server-side
// bookkeeping (managedFields) is left out.
import { stringify } from 'yaml';
import { filterClauses, type RouteFilter } from '../../core/filter';
import { filterKeys } from './owner';
import { blockingReason } from './phases';
import { totalDelivered, type SessionView } from './sidecarView';
import type { QueueSplit } from './types';
import { specFilter } from '../../core/crd/splitFilter';

/** Another owner's spec with every filter value (spec.filter's and spec.match's) replaced by "…". */
function maskedSpec(spec: QueueSplit['spec']): Record<string, unknown> {
  const { filter, match, ...rest } = spec;
  const masked = (map: object) => Object.fromEntries(Object.keys(map).map((k) => [k, '…']));
  return {
    ...rest,
    ...(filter !== undefined ? { filter: masked(filter) } : {}),
    ...(match !== undefined ? { match: { anyOf: filterClauses(match as RouteFilter).map(masked) } } : {}),
  };
}

export function detailsYaml(
  split: QueueSplit | undefined,
  options: { mine: boolean; session?: SessionView; name: string; namespace: string; context: string },
): string {
  const header = [
    `# Queue Split — ${options.name} (namespace ${options.namespace}, context ${options.context})`,
    '# Read-only; it follows the cluster live. Stop the split with "Queue Split: Stop Split".',
  ];
  const doc: Record<string, unknown> = {};
  if (split === undefined) {
    doc.queueSplit = 'gone (the split was deleted and drained, or never existed)';
  } else {
    const metadata: Record<string, unknown> = { ...split.metadata };
    delete metadata.managedFields;
    const spec = options.mine ? split.spec : maskedSpec(split.spec);
    const { phase, reason, nextAction } = blockingReason(split);
    doc.state = {
      phase,
      ...(reason !== undefined ? { waitingOn: reason } : {}),
      ...(nextAction !== undefined ? { nextAction } : {}),
      ...(options.mine
        ? {}
        : { note: `filter values of other owners are hidden (${filterKeys(specFilter(split.spec))})` }),
    };
    doc.queueSplit = {
      apiVersion: split.apiVersion,
      kind: split.kind,
      metadata,
      spec,
      status: split.status ?? {},
    };
  }
  if (options.session !== undefined) {
    const s = options.session;
    doc.sidecar = {
      stage: s.stage,
      mode: s.mode,
      ...(s.pid !== undefined ? { pid: s.pid } : {}),
      message: s.message,
      deliveredToYourProcess: totalDelivered(s),
      deliveredPerQueue: s.delivered,
      failedAttemptsPerQueue: s.failed,
      ...(s.ready !== undefined
        ? {
            queues: s.ready.queues,
            ...(Object.keys(s.ready.env).length > 0 ? { env: s.ready.env } : {}),
            ...(s.ready.secretEnv.length > 0 ? { secretEnvNames: s.ready.secretEnv } : {}),
            ...(s.ready.envFile !== undefined ? { envFile: s.ready.envFile } : {}),
          }
        : {}),
      ...(s.error !== undefined
        ? {
            error: { code: s.error.code, message: s.error.message, suggestedAction: s.error.suggestedAction },
          }
        : {}),
      ...(s.warnings.length > 0
        ? { recentWarnings: s.warnings.map((w) => ({ code: w.code, message: w.message, time: w.time })) }
        : {}),
    };
  }
  return `${header.join('\n')}\n${stringify(doc, { lineWidth: 0 })}`;
}
