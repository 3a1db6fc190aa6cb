// The Kafka engine's hold on its split: connecting takes the fence (the transactional producer);
// a replacement engine's producer fences this one for good, and a fenced engine closes every
// client at once so it never touches the split again.
import type { Outcome } from '../engine/contract';
import type { Logger } from '../log';
import { degraded, pending } from '../engine/outcome';
import type { Blocked } from '../engine/port';
import type { KafkaLink } from './link';

export class KafkaFence {
  private since: string | undefined;

  constructor(
    private readonly link: KafkaLink,
    private readonly log: Logger,
  ) {}

  /** When this engine learnt it was fenced. */
  get fencedSince(): string | undefined {
    return this.since;
  }

  /** Connects what is missing and takes the fence. */
  async up(): Promise<Blocked> {
    const state = await this.link.up();
    if (state.ok) return undefined;
    if (state.fenced) {
      this.fenced(state.reason);
      return this.outcome();
    }
    return pending('broker-unavailable', state.reason, 2_000);
  }

  /** The fence is lost: what every step answers from now on. */
  lost(): Outcome<never> | undefined {
    return this.link.fenced ? this.outcome() : undefined;
  }

  fenced(reason: string): void {
    if (this.since) return;
    this.since = new Date().toISOString();
    this.log.warn('engine.fenced', { reason });
    // A fenced engine must not touch the split again: close every client now.
    void this.link.close().catch(() => undefined);
  }

  outcome(): Outcome<never> {
    return degraded(
      'fenced',
      this.link.fenced ?? 'a newer engine holds the transactional id',
      'make sure only one queue-agent serves this queue; this engine has closed its clients',
    );
  }
}
