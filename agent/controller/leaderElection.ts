// Leader election on a coordination Lease: of several controller replicas exactly one acts.
// Acquire when the Lease is free or expired, renew well within its duration, and stop acting
// (exit) the moment a renewal fails, so two leaders never overlap for longer than one lease.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from '../engine/log';
import { isConflict, isNotFound, mergePatch, microTime } from '../kube/client';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseSeconds: number;
}

export class LeaderElection {
  private readonly api: CoordinationV1Api;

  constructor(
    kc: KubeConfig,
    private readonly options: LeaderElectionOptions,
    private readonly log: Logger,
  ) {
    this.api = kc.makeApiClient(CoordinationV1Api);
  }

  /** Resolves once this replica holds the Lease. */
  async acquire(): Promise<void> {
    for (;;) {
      if (await this.tryAcquire()) {
        this.log.info('leader.acquired', { identity: this.options.identity });
        return;
      }
      await sleep((this.options.leaseSeconds * 1000) / 3);
    }
  }

  /** Renews until a renewal fails, then calls `lost`. */
  keepRenewing(lost: (why: string) => void): void {
    const tick = async () => {
      try {
        if (!(await this.tryAcquire())) return lost('another replica holds the leader Lease');
      } catch (err) {
        return lost(String(err));
      }
      setTimeout(() => void tick(), (this.options.leaseSeconds * 1000) / 3);
    };
    setTimeout(() => void tick(), (this.options.leaseSeconds * 1000) / 3);
  }

  /** On a clean stop: hand the Lease over at once instead of making the next leader wait it out. */
  async release(): Promise<void> {
    const { namespace, name, identity } = this.options;
    const lease = await this.api.readNamespacedLease({ name, namespace });
    if (lease.spec?.holderIdentity !== identity) return;
    await this.api.patchNamespacedLease(
      {
        name,
        namespace,
        body: {
          metadata: { resourceVersion: lease.metadata?.resourceVersion },
          spec: { holderIdentity: null, renewTime: null },
        },
      },
      mergePatch,
    );
  }

  private async tryAcquire(): Promise<boolean> {
    const { namespace, name, identity, leaseSeconds } = this.options;
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.api.createNamespacedLease({
          namespace,
          body: { metadata: { name }, spec: { leaseDurationSeconds: leaseSeconds } },
        });
      } catch (createErr) {
        if (!isConflict(createErr)) throw createErr;
      }
      lease = await this.api.readNamespacedLease({ name, namespace });
    }
    const holder = lease.spec?.holderIdentity;
    const renewed = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
    const expired = Date.now() > renewed + (lease.spec?.leaseDurationSeconds ?? leaseSeconds) * 1000;
    if (holder && holder !== identity && !expired) return false;
    const now = microTime(new Date());
    try {
      // resourceVersion in a merge patch is a precondition: a racing replica gets 409.
      await this.api.patchNamespacedLease(
        {
          name,
          namespace,
          body: {
            metadata: { resourceVersion: lease.metadata?.resourceVersion },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: leaseSeconds,
              renewTime: now,
              ...(holder !== identity
                ? { acquireTime: now, leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + 1 }
                : {}),
            },
          },
        },
        mergePatch,
      );
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }
}
