// The RBAC preflight before the extension creates (or adopts) a split, in the extension's
// words: which verbs are missing, that nothing was created, and what to do (core/accessPreflight.ts).
import * as l10n from '@vscode/l10n';
import type { WorkloadRef } from '../../core/crd/queueSplitSchema';
import { accessText, deniedAccess, sessionAccessChecks } from '../../core/accessPreflight';
import { developerRoleBindingCommand, subjectOfUser } from '../../core/kubeFailure';
import { fix, uniqueFixes } from '../model/fixes';
import type { ClusterApi } from './cluster';
import { failureFacts } from './connection';
import { KubeProblem, kubeProblem } from './errors';

export async function sessionPreflight(
  api: ClusterApi,
  workload: WorkloadRef,
  session: { creates: boolean; streams: boolean },
): Promise<void> {
  const { namespace, context } = api.target;
  let denied;
  try {
    denied = await deniedAccess(api.connection.kc, namespace, sessionAccessChecks(workload, session));
  } catch (err) {
    throw kubeProblem(err, {
      verb: 'create',
      resource: 'selfsubjectaccessreviews.authorization.k8s.io',
      namespace,
      ...failureFacts(api.connection),
    });
  }
  if (denied.length === 0) return;
  // Who to bind, for the command an admin runs (a refusal here costs one more call, once).
  const user = await api.whoAmI().catch(() => undefined);
  const command =
    user !== undefined ? developerRoleBindingCommand(namespace, subjectOfUser(user)) : undefined;
  throw new KubeProblem(
    l10n.t(
      'Your credentials (context "{0}") may not, in namespace {1}: {2}. Nothing was created.',
      context,
      namespace,
      denied.map((c) => l10n.t('{0} (to {1})', accessText(c), c.why)).join('; '),
    ),
    l10n.t(
      'Ask your cluster admin to bind the queuesplit-developer ClusterRole to you in namespace {0}, or pick a namespace where you have it with "Queue Split: Select Context/Namespace…".',
      namespace,
    ),
    'forbidden',
    uniqueFixes([command !== undefined ? fix.copyRoleBinding(command) : undefined, fix.selectContext()]),
  );
}
