// Leader election on a coordination Lease: of several controller replicas exactly one acts
// (docs/design.md, "Leader election"). The timing is client-go's: the leader renews every
// retry period, each request bounded by a timeout; a failed renewal is retried until the renew
// deadline (two thirds of the lease) has passed since the last renewal that succeeded, and only
// then does it stop acting. Another replica takes over only once the Lease record has stayed
// unchanged for a whole lease on its own clock (leaseObserver.ts), so the old leader has stopped
// at least a third of a lease before anyone else starts, whatever the clocks of the two nodes say.
// @kubernetes/client-node 1.4 ships no leader election (client-go's is Go-only), hence this one.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { describeError, type Logger } from '../log';
import { isConflict, isNotFound, mergePatch, microTime } from '../kube/client';
import { withTimeout } from '../kube/timeout';
import { LeaseObserver } from './leaseObserver';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseSeconds: number;
}

/** client-go's defaults are 15 s / 10 s / 2 s; these keep the same proportions for any lease. */
export function electionTiming(leaseSeconds: number) {
  const leaseMs = leaseSeconds * 1000;
  return { leaseMs, renewDeadlineMs: (leaseMs * 2) / 3, retryMs: leaseMs / 5 };
}

export class LeaderElection {
  private readonly api: CoordinationV1Api;
  private readonly observer = new LeaseObserver();
  private readonly timing: ReturnType<typeof electionTiming>;
  /** Monotonic time the last successful acquire or renewal was sent. */
  private renewedAt = 0;
  /** Set by release(): the renewal loop ends without reporting anything. */
  private releasing = false;
  /** The renewal attempt in flight, which release() lets finish before it writes. */
  private renewal: Promise<unknown> = Promise.resolve();

  constructor(
    kc: KubeConfig,
    private readonly options: LeaderElectionOptions,
    private readonly log: Logger,
  ) {
    this.api = kc.makeApiClient(CoordinationV1Api);
    this.timing = electionTiming(options.leaseSeconds);
  }

  /** Resolves once this replica holds the Lease. */
  async acquire(): Promise<void> {
    for (;;) {
      const started = performance.now();
      try {
        if (await this.tryAcquireOrRenew(this.timing.retryMs)) {
          this.renewedAt = started;
          this.log.info('leader.acquired', { identity: this.options.identity });
          return;
        }
      } catch (err) {
        this.log.warn('leader.acquire_failed', { reason: describeError(err) });
      }
      await sleep(Math.max(0, started + this.timing.retryMs - performance.now()));
    }
  }

  /**
   * Renews every retry period. A failed or timed-out renewal is retried; `lost` is called once
   * another replica holds the Lease or no renewal succeeded within the renew deadline.
   */
  keepRenewing(lost: (why: string) => void): void {
    const { renewDeadlineMs, retryMs } = this.timing;
    const loop = async () => {
      let lastError = '';
      for (;;) {
        if (this.releasing) return;
        const started = performance.now();
        const left = this.renewedAt + renewDeadlineMs - started;
        if (left <= 0) {
          return lost(
            `the leader Lease was not renewed within ${renewDeadlineMs / 1000}s (${lastError || 'no answer'})`,
          );
        }
        try {
          const attempt = this.tryAcquireOrRenew(Math.min(retryMs, left));
          this.renewal = attempt.catch(() => undefined);
          const held = await attempt;
          // Released meanwhile: whatever this attempt met (the release's own write among it)
          // is no lost Lease.
          if (this.releasing) return;
          if (!held) return lost('another replica holds the leader Lease');
          this.renewedAt = started;
          lastError = '';
        } catch (err) {
          if (this.releasing) return;
          lastError = describeError(err);
          this.log.warn('leader.renew_failed', {
            reason: lastError,
            secondsLeft: Math.round((this.renewedAt + renewDeadlineMs - performance.now()) / 100) / 10,
          });
        }
        await sleep(Math.max(0, started + retryMs - performance.now()));
      }
    };
    void loop();
  }

  /**
   * On a clean stop: hand the Lease over at once instead of making the next leader wait it out.
   * The renewal loop ends first and its attempt in flight finishes: a renewal read before this
   * write and written after it would meet a conflict and report the Lease lost.
   */
  async release(): Promise<void> {
    this.releasing = true;
    await this.renewal;
    const { namespace, name, identity } = this.options;
    const timeout = () => withTimeout(this.timing.retryMs);
    const lease = await this.api.readNamespacedLease({ name, namespace }, timeout());
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
      withTimeout(this.timing.retryMs, mergePatch),
    );
  }

  /** One attempt, every request of it bounded by `timeoutMs` in all. */
  private async tryAcquireOrRenew(timeoutMs: number): Promise<boolean> {
    const { namespace, name, identity, leaseSeconds } = this.options;
    const deadline = performance.now() + timeoutMs;
    const timeout = () => withTimeout(deadline - performance.now());
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace }, timeout());
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.api.createNamespacedLease(
          { namespace, body: { metadata: { name }, spec: { leaseDurationSeconds: leaseSeconds } } },
          timeout(),
        );
      } catch (createErr) {
        if (!isConflict(createErr)) throw createErr;
      }
      lease = await this.api.readNamespacedLease({ name, namespace }, timeout());
    }
    const holder = lease.spec?.holderIdentity;
    const record = {
      holderIdentity: holder ?? null,
      resourceVersion: lease.metadata?.resourceVersion ?? '',
      ...(lease.spec?.leaseDurationSeconds !== undefined
        ? { leaseDurationSeconds: lease.spec.leaseDurationSeconds }
        : {}),
    };
    if (!this.observer.mayHold(record, identity, this.timing.leaseMs)) return false;
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
        withTimeout(deadline - performance.now(), mergePatch),
      );
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }
}
