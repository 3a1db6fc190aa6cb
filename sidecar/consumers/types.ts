// What a consumer of a session shadow hands to a delivery mode: one message with everything the
// destination needs (body and headers as the broker carried them), and the contract around it.
import type { ShadowMessage } from '../../core/shadowMessage';

/**
 * How a delivery ended. `ack`: the destination has it; the consumer acks/commits. `reject`: the
 * developer gave up on it (a reject request, --reject-after) while it kept failing; the consumer
 * settles it as the app's own reject would — RabbitMQ basic.reject without requeue (the broker
 * dead-letters it by the queue's arguments), Kafka a commit past it (Kafka has no reject).
 */
export interface Delivery {
  settle: 'ack' | 'reject';
  /** Attempts made. */
  attempts: number;
  /** `reject`: who gave up on it, and the last attempt's failure. */
  rejectedBy?: 'request' | 'reject-after';
  reason?: string;
}

export interface DeliveryHandler {
  /**
   * Delivers one message and resolves once the destination has it, or once the developer gave
   * up on it; the consumer then acks/commits (or rejects). Rejects only when the sidecar stops:
   * the consumer does not settle it, so it stays in the shadow (a restart resumes, a detach
   * drains it).
   */
  deliver(message: ShadowMessage): Promise<Delivery>;
  /** Called once the broker has the ack/commit (or reject). */
  settled(message: ShadowMessage, delivery: Delivery): void;
}

export interface ShadowConsumer {
  readonly queue: string;
  /** Connects and starts consuming; rejects with a SidecarError when that is impossible. */
  start(handler: DeliveryHandler): Promise<void>;
  /** Stops taking messages; the in-flight one is not acked unless it completed. Idempotent. */
  stop(): Promise<void>;
}
