// The redirect writes its env overrides by read → replace (agent/controller/workloads.ts
// setOverrides). The workload's own controller writes its status in between often enough (after
// the quiesce scale, after a rollout): that moves the resourceVersion, the replace meets a 409,
// and the activation was aborted ("REDIRECTING_APP failed: 409 … the object has been modified",
// seen in the controller-scale bench at 10 workloads). A status write changes nothing the
// overrides touch: the write is made again on the fresh workload. The apps API here is a stand-in
// with the API server's resourceVersion precondition, so the interleaving is forced.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import { ORIGINAL_ENV_ANNOTATION } from '../../../core/queueConfig/originalEnv';
import { Workloads } from '../../../agent/controller/workloads';

class AppsApi {
  deployment: V1Deployment = {
    metadata: { name: 'app', namespace: 'team-a', resourceVersion: '1', generation: 1 },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'app' } },
      template: {
        metadata: { labels: { app: 'app' } },
        spec: {
          containers: [{ name: 'app', image: 'app', env: [{ name: 'SOURCE_QUEUE', value: 'orders' }] }],
        },
      },
    },
  };
  /** Status writes to make between the next reads and their replaces. */
  statusWritesAfterRead = 0;
  replaces = 0;

  private bump(): void {
    this.deployment.metadata!.resourceVersion = String(Number(this.deployment.metadata!.resourceVersion) + 1);
  }
  async readNamespacedDeployment(): Promise<V1Deployment> {
    const copy = structuredClone(this.deployment);
    if (this.statusWritesAfterRead > 0) {
      this.statusWritesAfterRead -= 1;
      this.deployment.status = { observedGeneration: 1, replicas: 1 };
      this.bump();
    }
    return copy;
  }
  async replaceNamespacedDeployment(request: { body: V1Deployment }): Promise<V1Deployment> {
    this.replaces += 1;
    if (request.body.metadata?.resourceVersion !== this.deployment.metadata!.resourceVersion)
      throw Object.assign(new Error('Operation cannot be fulfilled: the object has been modified'), {
        code: 409,
      });
    this.deployment = { ...structuredClone(request.body), status: this.deployment.status };
    this.bump();
    return structuredClone(this.deployment);
  }
}

function workloads(api: AppsApi): Workloads {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:9' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const w = new Workloads(kc);
  // The stand-in replaces the client's Deployment calls (the only ones env overrides make); no
  // file override here, so no ConfigMap copy to make or prune.
  (w as unknown as { apps: AppsApi }).apps = api;
  (w as unknown as { copies: object }).copies = { ensure: async () => ({}), prune: async () => undefined };
  return w;
}

const override = [
  { container: 'app', at: { kind: 'env' as const, name: 'SOURCE_QUEUE' }, value: 'orders.app-shadow' },
];

test("a status write between the overrides' read and write: the overrides are written, not the step failed", async () => {
  const api = new AppsApi();
  api.statusWritesAfterRead = 1;
  await workloads(api).setOverrides('Deployment', 'team-a', 'app', override, 3);
  const env = api.deployment.spec!.template.spec!.containers[0]!.env!;
  assert.equal(env.find((e) => e.name === 'SOURCE_QUEUE')?.value, 'orders.app-shadow');
  assert.equal(
    JSON.parse(api.deployment.metadata!.annotations![ORIGINAL_ENV_ANNOTATION]!)['app/SOURCE_QUEUE'],
    'orders',
  );
  assert.equal(api.replaces, 2, 'written once more, on the fresh workload');
});

test('a workload that keeps changing under every attempt: the conflict is reported, not retried for ever', async () => {
  const api = new AppsApi();
  api.statusWritesAfterRead = 100;
  await assert.rejects(
    workloads(api).setOverrides('Deployment', 'team-a', 'app', override, 3),
    (err: unknown) => (err as { code?: number }).code === 409,
  );
  assert.ok(api.replaces <= 5, `gave up after ${api.replaces} attempts`);
});

/** The scale subresource with the API server's resourceVersion precondition; `personScalesTo`
 * is a person's `kubectl scale` landing right after the controller's next read. */
class ScaleApi extends AppsApi {
  personScalesTo: number | undefined;
  override async readNamespacedDeployment(): Promise<V1Deployment> {
    const copy = await super.readNamespacedDeployment();
    if (this.personScalesTo !== undefined) {
      this.deployment.spec!.replicas = this.personScalesTo;
      this.personScalesTo = undefined;
      this.deployment.metadata!.resourceVersion = String(
        Number(this.deployment.metadata!.resourceVersion) + 1,
      );
    }
    return copy;
  }
  async replaceNamespacedDeploymentScale(request: {
    body: { metadata?: { resourceVersion?: string }; spec?: { replicas?: number } };
  }): Promise<V1Deployment> {
    const rv = request.body.metadata?.resourceVersion;
    if (rv !== undefined && rv !== this.deployment.metadata!.resourceVersion)
      throw Object.assign(new Error('Operation cannot be fulfilled: the object has been modified'), {
        code: 409,
      });
    this.deployment.spec!.replicas = request.body.spec?.replicas;
    this.deployment.metadata!.resourceVersion = String(Number(this.deployment.metadata!.resourceVersion) + 1);
    return structuredClone(this.deployment);
  }
}

test("a person's scale during the cutover is not overwritten by the redirect's scale-up (CI: the split went Active at the controller's count)", async () => {
  // Landed before the redirect's read: the workload is no longer at the quiesce's 0.
  const before = new ScaleApi();
  before.deployment.spec!.replicas = 3;
  await workloads(before).scale('Deployment', 'team-a', 'app', 2, undefined, 0);
  assert.equal(
    before.deployment.spec!.replicas,
    3,
    "left at the person's 3 for the phase's scale check to name",
  );

  // Landed between the redirect's read and its write: the precondition refuses the write.
  const between = new ScaleApi();
  between.deployment.spec!.replicas = 0;
  between.personScalesTo = 3;
  await workloads(between).scale('Deployment', 'team-a', 'app', 2, undefined, 0);
  assert.equal(between.deployment.spec!.replicas, 3);

  // Nobody else: scaled up; and a step retried after it finds it done.
  const alone = new ScaleApi();
  alone.deployment.spec!.replicas = 0;
  await workloads(alone).scale('Deployment', 'team-a', 'app', 2, undefined, 0);
  assert.equal(alone.deployment.spec!.replicas, 2);
  await workloads(alone).scale('Deployment', 'team-a', 'app', 2, undefined, 0);
  assert.equal(alone.deployment.spec!.replicas, 2);
});
