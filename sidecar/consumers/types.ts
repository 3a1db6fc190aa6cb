// What a consumer of a session shadow hands to a delivery mode: one message with everything the
// destination needs (body and headers as the broker carried them), and the contract around it.
import type { ShadowMessage } from '../../core/shadowMessage';

export interface DeliveryHandler {
  /**
   * Delivers one message and resolves with the number of attempts it took, once the destination
   * has it; the consumer then acks/commits. Rejects only when the sidecar stops: the consumer
   * does not ack, so the message stays in the shadow (a restart resumes, a detach drains it).
   */
  deliver(message: ShadowMessage): Promise<number>;
  /** Called after the ack/commit went out. */
  acked(message: ShadowMessage, attempts: number): void;
}

export interface ShadowConsumer {
  readonly queue: string;
  /** Connects and starts consuming; rejects with a SidecarError when that is impossible. */
  start(handler: DeliveryHandler): Promise<void>;
  /** Stops taking messages; the in-flight one is not acked unless it completed. Idempotent. */
  stop(): Promise<void>;
}
