// The RBAC part of the preflight: before a QueueSplit exists — before the
// team's workload is scaled down and rolled — ask the API server, one SelfSubjectAccessReview
// per verb, whether the caller may do everything the session will need. Without it a user who
// may create but not renew or delete a split would start a cutover nobody can stop but the
// lease. The sidecar and the extension word the answer in their own terms.
import { AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { QUEUE_SPLIT_GROUP, QUEUE_SPLIT_PLURAL, type WorkloadRef } from './crd/queueSplitSchema';

export interface AccessCheck {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  name?: string;
  /** What the session does with it, for the message. */
  why: string;
}

/** RBAC text of a check: `create queuesplits.queuesplit.dev`, `get deployments.apps/orders`. */
export function accessText(check: AccessCheck): string {
  const resource = check.group === '' ? check.resource : `${check.resource}.${check.group}`;
  const sub = check.subresource !== undefined ? `/${check.subresource}` : '';
  return `${check.verb} ${resource}${sub}${check.name !== undefined ? `/${check.name}` : ''}`;
}

/**
 * Every verb one session needs (README "The developer role"). `create` only for a new split;
 * an adopted one (`--split`, or the extension's) is already there. `streams`: the session's
 * messages come through the queue-agent (http and relay delivery), reached by port-forward.
 */
export function sessionAccessChecks(
  workload: WorkloadRef,
  session: { creates: boolean; streams: boolean },
): AccessCheck[] {
  const splits = { group: QUEUE_SPLIT_GROUP, resource: QUEUE_SPLIT_PLURAL };
  const creates = session.creates;
  return [
    ...(session.streams
      ? [
          { verb: 'list', group: '', resource: 'pods', why: "find the workload's queue-agent" },
          // A WebSocket port-forward is `get` up to Kubernetes 1.34, `create` from 1.35 on.
          ...['get', 'create'].map((verb) => ({
            verb,
            group: '',
            resource: 'pods',
            subresource: 'portforward',
            why: 'receive your messages from the queue-agent',
          })),
        ]
      : []),
    {
      verb: 'get',
      group: 'apps',
      resource: workload.kind === 'Deployment' ? 'deployments' : 'statefulsets',
      name: workload.name,
      why: "read the workload's queue declaration",
    },
    ...(creates ? [{ ...splits, verb: 'create', why: 'create your split' }] : []),
    { ...splits, verb: 'get', why: "follow your split's status" },
    { ...splits, verb: 'patch', why: "renew your split's lease" },
    { ...splits, verb: 'delete', why: 'stop your split' },
  ];
}

/** The checks the API server denies (empty: all allowed). API failures are thrown as they are. */
export async function deniedAccess(
  kc: KubeConfig,
  namespace: string,
  checks: readonly AccessCheck[],
): Promise<AccessCheck[]> {
  const api = kc.makeApiClient(AuthorizationV1Api);
  const answers = await Promise.all(
    checks.map((check) =>
      api.createSelfSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: {
            resourceAttributes: {
              namespace,
              verb: check.verb,
              group: check.group,
              resource: check.resource,
              ...(check.subresource !== undefined ? { subresource: check.subresource } : {}),
              ...(check.name !== undefined ? { name: check.name } : {}),
            },
          },
        },
      }),
    ),
  );
  return checks.filter((_, i) => answers[i]?.status?.allowed !== true);
}
