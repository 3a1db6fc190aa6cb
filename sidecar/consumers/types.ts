// What a consumer of a session shadow hands to a delivery mode: one message with everything the
// destination needs (body and headers as the broker carried them), and the contract around it.
import type { MessageHeaders } from '../../core/filter';

/** One broker header as carried: Kafka values are bytes (repeated keys appear twice), AMQP values typed. */
export interface CarriedHeader {
  name: string;
  value: unknown;
}

export interface ShadowMessage {
  /** Logical queue name. */
  queue: string;
  /** Stable across redeliveries: AMQP message-id, else Kafka `<partition>-<offset>`, else generated. */
  id: string;
  body: Buffer;
  /** Broker timestamp (Kafka record / AMQP property), else receipt time. */
  time: Date;
  contentType?: string;
  headers: CarriedHeader[];
  /** Headers as the filter sees them (core/filter normalisation). */
  filterHeaders: MessageHeaders;
  kafka?: {
    partition: number;
    offset: string;
    key: Buffer | null;
    timestamp: string;
    rawHeaders: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
  };
  amqp?: { properties: AmqpProperties; redelivered: boolean };
}

/** The AMQP basic properties the sidecar forwards (relay) or maps (http). */
export interface AmqpProperties {
  contentType?: string;
  contentEncoding?: string;
  headers?: Record<string, unknown>;
  deliveryMode?: number;
  priority?: number;
  correlationId?: string;
  replyTo?: string;
  expiration?: string;
  messageId?: string;
  timestamp?: number;
  type?: string;
  userId?: string;
  appId?: string;
}

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
