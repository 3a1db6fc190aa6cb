// A delivery mode's per-message half: one attempt to hand a message to its destination.
// Retrying, counting and reporting around it are shared (delivery/pipeline.ts).
import type { ShadowMessage } from '../../core/shadowMessage';
import type { AttemptResult, Outage } from './retry';

export interface Deliverer {
  /** For people and the `ready` line: where messages go (no credentials). */
  describe(queue: string): string;
  /** The outage tracker of the destination this queue delivers to. */
  outage(queue: string): Outage;
  /** One attempt. Failures are results; throws only when `signal` aborts. */
  attempt(message: ShadowMessage, signal: AbortSignal): Promise<AttemptResult>;
  close(): Promise<void>;
}
