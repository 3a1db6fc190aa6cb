// The slice of the RabbitMQ management HTTP API the engine reads: one queue's declaration,
// counts and consumers. Statistics lag AMQP state (seconds on quorum queues) and a field the
// broker has not computed yet is simply absent, so every count is optional: callers treat
// "absent" as "unknown", never as zero.
import { managementTarget, type ManagementTarget } from './urls';

export interface ConsumerDetail {
  readonly consumer_tag: string;
  readonly channel_details?: { readonly connection_name?: string };
}

export interface ManagementQueue {
  readonly name: string;
  readonly type: string;
  readonly durable: boolean;
  readonly auto_delete: boolean;
  readonly exclusive: boolean;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly policy?: string | null;
  readonly operator_policy?: string | null;
  /** The policy and operator policy merged, as the broker applies them to this queue. */
  readonly effective_policy_definition?: Readonly<Record<string, unknown>> | null;
  readonly consumers?: number;
  readonly messages_ready?: number;
  readonly messages_unacknowledged?: number;
  readonly consumer_details?: readonly ConsumerDetail[];
  /** Classic queues: the tag of the exclusive consumer. It dates the consumer details only:
   * the counts beside it may be older (shadows.ts). */
  readonly exclusive_consumer_tag?: string | null;
}

export class ManagementClient {
  private readonly target: ManagementTarget;

  constructor(
    managementUrl: string,
    amqpUrl: string,
    private readonly vhost: string,
    private readonly timeoutMs: number,
  ) {
    this.target = managementTarget(managementUrl, amqpUrl);
  }

  /** The queue, or undefined when the broker says 404. Errors name the path, never the URL. */
  async getQueue(name: string): Promise<ManagementQueue | undefined> {
    const path = `/api/queues/${encodeURIComponent(this.vhost)}/${encodeURIComponent(name)}`;
    let res: Response;
    try {
      res = await fetch(`${this.target.origin}${path}`, {
        headers: { authorization: this.target.authorization },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new Error(`management API GET ${path} failed: ${err instanceof Error ? err.name : 'error'}`);
    }
    if (res.status === 404) {
      await res.body?.cancel();
      return undefined;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`management API GET ${path}: HTTP ${res.status}`);
    }
    return (await res.json()) as ManagementQueue;
  }
}
