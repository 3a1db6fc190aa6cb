// The cluster calls the extension makes with the user's credentials: read annotated workloads
// and QueueSplits, create and delete the user's QueueSplits, list namespaces, apply the install
// manifests. Loaded lazily (with @kubernetes/client-node) the first time a command needs it.
import * as l10n from '@vscode/l10n';
import { applyObjects } from '../../deploy/apply';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { type QueueSplit } from '../../core/crd/queueSplitSchema';
import { IdentityUnknown, SELF_REVIEW_PERMISSION, reviewSelf } from '../../core/identity';
import { developerRoleBindingCommand, failureStatusMessage, forbiddenSubject } from '../../core/kubeFailure';
import { fix, uniqueFixes } from '../model/fixes';
import { queueSplitName, routeIdFromRandomBytes } from '../../core/names';
import type { WorkloadLike } from '../../core/queueConfig/podTemplate';
import { queueSplitObject } from '../../core/crd/queueSplitObject';
import { QUEUE_SPLIT_RESOURCE, QueueSplitClient } from '../../laptop/queueSplitClient';
import { annotateForbidden, resourceOfKind } from '../model/annotation/forbidden';
import type { SplitRequest, WorkloadInfo, WorkloadKind } from '../model/types';
import { isAnnotated, summarizeWorkload } from '../model/workloads';
import { failureFacts, type KubeConnection } from './connection';
import { httpStatus, isCrdMissing, kubeProblem, KubeProblem } from './errors';

export type Probe =
  | { state: 'ready'; workloads: number; splits: number }
  | { state: 'controllerMissing' }
  | { state: 'noWorkloads' };

/** A new QueueSplit for `request` (route id random, name derived from owner, workload and route). */
export function newQueueSplit(
  request: SplitRequest,
  routeId: string,
  leaseSeconds: number,
  now = new Date(),
  /** http/relay: the hash of the session secret the sidecar proves to the queue-agent. */
  sessionPublicKey?: string,
): QueueSplit {
  return queueSplitObject({
    name: queueSplitName({ owner: request.owner, workloadName: request.workload.name, routeId }),
    namespace: request.target.namespace,
    createdBy: 'extension',
    workload: request.workload,
    queues: request.queues,
    filter: request.filter,
    owner: request.owner,
    routeId,
    // Whole seconds: RFC 3339 as the CRD's date-time format and the sidecar write it.
    lease: { renewTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z'), durationSeconds: leaseSeconds },
    mode: request.mode,
    ...(sessionPublicKey !== undefined ? { sessionPublicKey } : {}),
  });
}

export class ClusterApi {
  readonly target;
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly splits: QueueSplitClient;

  constructor(readonly connection: KubeConnection) {
    this.target = connection.target;
    this.apps = connection.kc.makeApiClient(AppsV1Api);
    this.core = connection.kc.makeApiClient(CoreV1Api);
    this.splits = new QueueSplitClient(connection.kc, connection.target.namespace);
  }

  private get ns(): string {
    return this.target.namespace;
  }

  private problem(err: unknown, verb: string, resource: string, name?: string, namespaced = true) {
    return kubeProblem(err, {
      verb,
      resource,
      ...failureFacts(this.connection),
      ...(namespaced ? { namespace: this.ns } : {}),
      ...(name !== undefined ? { name } : {}),
    });
  }

  /**
   * The caller's Kubernetes user name (SelfSubjectReview): the owner of the splits this
   * extension creates, stops and adopts. The `queuesplit-owner` admission policy refuses any
   * other owner, so two dev containers whose OS user is `vscode` no longer share splits.
   */
  async whoAmI(): Promise<string> {
    try {
      return (await reviewSelf(this.connection.kc)).username;
    } catch (err) {
      if (err instanceof IdentityUnknown && err.forbidden) {
        const subject = forbiddenSubject(failureStatusMessage(err.cause));
        const command = subject !== undefined ? developerRoleBindingCommand(this.ns, subject) : undefined;
        throw new KubeProblem(
          l10n.t(
            'Your credentials (context "{0}") may not {1}: Queue Split uses it to learn your Kubernetes user name, the owner of your splits.',
            this.target.context,
            SELF_REVIEW_PERMISSION,
          ),
          l10n.t(
            'Ask your cluster admin to bind the queuesplit-developer ClusterRole to you in namespace {0} (it grants {1}), then Retry.',
            this.ns,
            SELF_REVIEW_PERMISSION,
          ),
          'forbidden',
          uniqueFixes([command !== undefined ? fix.copyRoleBinding(command) : undefined, fix.retry()]),
        );
      }
      if (err instanceof IdentityUnknown && err.cause === undefined)
        throw new KubeProblem(
          l10n.t(
            'The cluster of context "{0}" did not say who you are: {1}.',
            this.target.context,
            err.message,
          ),
          l10n.t(
            'Check your kubeconfig credentials; or, as a member of queuesplit:admins, set queueSplit.owner.',
          ),
          'other',
        );
      throw this.problem(
        err instanceof IdentityUnknown ? err.cause : err,
        'create',
        'selfsubjectreviews.authentication.k8s.io',
        undefined,
        false,
      );
    }
  }

  /** What the tree's welcome view needs to know: installed? anything to split here? */
  async probe(): Promise<Probe> {
    let splits: QueueSplit[];
    try {
      splits = await this.listSplits();
    } catch (err) {
      if (err instanceof KubeProblem && err.kind === 'crd-missing') return { state: 'controllerMissing' };
      throw err;
    }
    const workloads = await this.listWorkloads();
    if (workloads.length === 0 && splits.length === 0) return { state: 'noWorkloads' };
    return { state: 'ready', workloads: workloads.length, splits: splits.length };
  }

  async listSplits(): Promise<QueueSplit[]> {
    try {
      return await this.splits.list();
    } catch (err) {
      throw this.problem(err, 'list', QUEUE_SPLIT_RESOURCE);
    }
  }

  async getSplit(name: string): Promise<QueueSplit | undefined> {
    try {
      return await this.splits.get(name);
    } catch (err) {
      if (httpStatus(err) === 404 && !isCrdMissing(err)) return undefined;
      throw this.problem(err, 'get', QUEUE_SPLIT_RESOURCE, name);
    }
  }

  async createSplit(
    request: SplitRequest,
    leaseSeconds: number,
    sessionPublicKey?: string,
  ): Promise<QueueSplit> {
    const body = newQueueSplit(
      request,
      routeIdFromRandomBytes(randomBytes(16)),
      leaseSeconds,
      new Date(),
      sessionPublicKey,
    );
    try {
      return await this.splits.create(body);
    } catch (err) {
      throw this.problem(err, 'create', QUEUE_SPLIT_RESOURCE, body.metadata.name);
    }
  }

  /** Deletes exactly this split (uid precondition); already gone counts as deleted. */
  async deleteSplit(name: string, uid?: string): Promise<void> {
    try {
      await this.splits.delete(name, uid);
    } catch (err) {
      const status = httpStatus(err);
      if ((status === 404 && !isCrdMissing(err)) || status === 409) return;
      throw this.problem(err, 'delete', QUEUE_SPLIT_RESOURCE, name);
    }
  }

  async listWorkloads(): Promise<WorkloadInfo[]> {
    const [deployments, statefulSets] = await Promise.all([
      this.apps.listNamespacedDeployment({ namespace: this.ns }).catch((err: unknown) => {
        throw this.problem(err, 'list', 'deployments.apps');
      }),
      this.apps.listNamespacedStatefulSet({ namespace: this.ns }).catch((err: unknown) => {
        throw this.problem(err, 'list', 'statefulsets.apps');
      }),
    ]);
    return [
      ...deployments.items
        .filter((d) => isAnnotated(d as WorkloadLike))
        .map((d) => summarizeWorkload('Deployment', d as WorkloadLike)),
      ...statefulSets.items
        .filter((s) => isAnnotated(s as WorkloadLike))
        .map((s) => summarizeWorkload('StatefulSet', s as WorkloadLike)),
    ];
  }

  /** The raw workload object (for the queue declaration and its env). */
  async readWorkload(kind: WorkloadKind, name: string): Promise<WorkloadLike> {
    try {
      const read =
        kind === 'Deployment'
          ? await this.apps.readNamespacedDeployment({ name, namespace: this.ns })
          : await this.apps.readNamespacedStatefulSet({ name, namespace: this.ns });
      return { ...(read as WorkloadLike), kind };
    } catch (err) {
      throw this.problem(err, 'get', kind === 'Deployment' ? 'deployments.apps' : 'statefulsets.apps', name);
    }
  }

  /** Every Deployment and StatefulSet of the namespace, annotated or not, as the API returns them. */
  async listWorkloadObjects(): Promise<(WorkloadLike & { kind: WorkloadKind })[]> {
    const [deployments, statefulSets] = await Promise.all([
      this.apps.listNamespacedDeployment({ namespace: this.ns }).catch((err: unknown) => {
        throw this.problem(err, 'list', 'deployments.apps');
      }),
      this.apps.listNamespacedStatefulSet({ namespace: this.ns }).catch((err: unknown) => {
        throw this.problem(err, 'list', 'statefulsets.apps');
      }),
    ]);
    return [
      ...deployments.items.map((d) => ({ ...(d as WorkloadLike), kind: 'Deployment' as const })),
      ...statefulSets.items.map((s) => ({ ...(s as WorkloadLike), kind: 'StatefulSet' as const })),
    ];
  }

  /**
   * Sets annotations of a workload with a merge patch of metadata.annotations and nothing else.
   * A 403 names the missing right and the way around it (model/annotation/forbidden.ts).
   */
  async annotateWorkload(
    kind: WorkloadKind,
    name: string,
    annotations: Record<string, string>,
  ): Promise<void> {
    const body = { metadata: { annotations } };
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    try {
      if (kind === 'Deployment')
        await this.apps.patchNamespacedDeployment({ name, namespace: this.ns, body }, merge);
      else await this.apps.patchNamespacedStatefulSet({ name, namespace: this.ns, body }, merge);
    } catch (err) {
      const status = httpStatus(err);
      if (status === 403) {
        const { message, suggestedAction } = annotateForbidden({
          kind,
          name,
          namespace: this.ns,
          context: this.target.context,
        });
        throw new KubeProblem(message, suggestedAction, 'forbidden');
      }
      throw this.problem(err, 'patch', resourceOfKind(kind), name);
    }
  }

  /** Namespaces the user may list, or undefined when RBAC does not allow listing them. */
  async listNamespaces(): Promise<string[] | undefined> {
    try {
      const list = await this.core.listNamespace();
      return list.items
        .map((n) => n.metadata?.name ?? '')
        .filter((n) => n !== '')
        .sort();
    } catch (err) {
      if (httpStatus(err) === 403) return undefined;
      throw this.problem(err, 'list', 'namespaces', undefined, false);
    }
  }

  /**
   * Applies each object server-side (deploy/apply.ts): validation, admission and RBAC are the API
   * server's; `dryRun` asks it to check everything without persisting anything. `report` gets
   * "created|updated|unchanged <kind> <name>" per object.
   */
  async apply(
    objects: readonly KubernetesObject[],
    dryRun: boolean,
    report: (line: string) => void,
  ): Promise<void> {
    for (const object of objects) {
      try {
        await applyObjects(this.connection.kc, [object], {
          dryRun,
          applied: (o, outcome) => report(`${outcome} ${o.kind ?? ''} ${o.metadata?.name ?? ''}`),
        });
      } catch (err) {
        throw kubeProblem(err, {
          verb: 'patch',
          resource: object.kind ?? 'object',
          name: object.metadata?.name ?? '',
          ...(object.metadata?.namespace !== undefined ? { namespace: object.metadata.namespace } : {}),
          ...failureFacts(this.connection),
        });
      }
    }
  }

  async waitForCrd(name: string, timeoutMs: number): Promise<void> {
    const api = this.connection.kc.makeApiClient(ApiextensionsV1Api);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const crd = await api.readCustomResourceDefinition({ name });
        if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
      } catch (err) {
        if (httpStatus(err) !== 404)
          throw kubeProblem(err, {
            verb: 'get',
            resource: 'customresourcedefinitions',
            name,
            ...failureFacts(this.connection),
          });
      }
      if (Date.now() > deadline)
        throw new KubeProblem(
          l10n.t('The CRD {0} is not Established after {1}s.', name, timeoutMs / 1000),
          l10n.t('Check the API server; then run the command again.'),
          'other',
        );
      await sleep(500);
    }
  }
}
