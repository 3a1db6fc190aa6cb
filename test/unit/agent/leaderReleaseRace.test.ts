// A leader that stops releases its Lease (agent/controller/run.ts: the loop ends, then
// `election.release()`). Its renewal loop must not race that release: a renewal read before the
// release and written after it meets a 409 and was read as "another replica holds the leader
// Lease", so the stopping controller exited 3 without logging `controller.stopped` (seen in
// test/cluster/agent-upgrade.test.ts under a full run). The Lease API here is a stand-in with
// the API server's resourceVersion precondition, so the interleaving is forced, not hoped for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { LeaderElection } from '../../../agent/controller/leaderElection';
import { silentLogger } from '../../../agent/log';

/** One Lease with resourceVersion preconditions; `holdNextRenewal` parks the next patch. */
class LeaseApi {
  lease: V1Lease = { metadata: { name: 'queuesplit-controller', resourceVersion: '1' }, spec: {} };
  private parked: (() => void) | undefined;
  private park: Promise<void> | undefined;
  private onParked: () => void = () => undefined;
  patchParked = new Promise<void>((resolve) => (this.onParked = resolve));

  holdNextRenewal(): void {
    this.park = new Promise((resolve) => (this.parked = resolve));
  }
  letRenewalGo(): void {
    this.parked?.();
  }

  async readNamespacedLease(): Promise<V1Lease> {
    return structuredClone(this.lease);
  }
  async createNamespacedLease(): Promise<V1Lease> {
    return structuredClone(this.lease);
  }
  async patchNamespacedLease(request: {
    body: { metadata?: { resourceVersion?: string }; spec: Record<string, unknown> };
  }): Promise<V1Lease> {
    const renewal = typeof request.body.spec.holderIdentity === 'string' && this.park;
    if (renewal) {
      const park = this.park!;
      this.park = undefined;
      this.onParked();
      await park;
    }
    if (request.body.metadata?.resourceVersion !== this.lease.metadata!.resourceVersion) {
      throw Object.assign(new Error('Conflict'), { code: 409 });
    }
    this.lease = {
      metadata: {
        ...this.lease.metadata,
        resourceVersion: String(Number(this.lease.metadata!.resourceVersion) + 1),
      },
      spec: { ...this.lease.spec, ...request.body.spec } as V1Lease['spec'],
    };
    return structuredClone(this.lease);
  }
}

function election(api: LeaseApi): LeaderElection {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:9' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const e = new LeaderElection(
    kc,
    { namespace: 'queuesplit-system', name: 'queuesplit-controller', identity: 'pod-a_1', leaseSeconds: 1 },
    silentLogger,
  );
  // The stand-in replaces the client's Lease calls (the only ones the election makes).
  (e as unknown as { api: LeaseApi }).api = api;
  return e;
}

test('a leader releasing its Lease while a renewal is in flight does not report the Lease lost', async () => {
  const api = new LeaseApi();
  const leader = election(api);
  await leader.acquire();
  assert.equal(api.lease.spec?.holderIdentity, 'pod-a_1');
  const lost: string[] = [];
  api.holdNextRenewal();
  leader.keepRenewing((why) => lost.push(why));
  await api.patchParked; // a renewal has read the Lease and waits to write it
  const released = leader.release();
  setTimeout(() => api.letRenewalGo(), 50);
  await released;
  await new Promise((r) => setTimeout(r, 500)); // what the renewal loop does next, if anything
  assert.deepEqual(lost, [], 'a clean stop is not a lost Lease');
  assert.equal(api.lease.spec?.holderIdentity ?? null, null, 'the Lease is released');
});
