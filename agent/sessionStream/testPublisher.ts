// Send Test Message on a developer's behalf (docs/design.md §8): the agent publishes into the
// real source with the workload's credentials, and only a message whose headers match the
// route's filter, so a developer can inject only messages that come back to themselves. The
// filter is checked against the message as it will be published (the agent sets the message id
// and content type itself; on Kafka they are headers the engine routes on), never against what
// the client asked for. Connections open on first use, one per broker URL, and stay for the
// agent's life.
import { randomUUID } from 'node:crypto';
import type { AgentQueuePlan } from '../../core/agentProtocol';
import { filterKeys, matches, MessageView, parseFilterKey, type HeaderFilter } from '../../core/filter';
import type { Provider } from '../../core/providers';
import type { TestMessage, TestMessageSender } from '../providers/contract';
import { testMessageSender, type PlanFor } from '../providers/registry';

export type { TestMessage } from '../providers/contract';

/** A published test message carries this id (Kafka: the `message-id` header; AMQP: message-id). */
export type PublishOutcome = { ok: true; messageId: string } | { ok: false; reason: string };

/** Header keys the filter reads (no values: they may be secret). */
function headerKeys(filter: HeaderFilter): string[] {
  return filterKeys(filter).filter((key) => {
    const parsed = parseFilterKey(key);
    return 'key' in parsed && parsed.key.kind === 'header';
  });
}

/** A sender per provider, made when a test message for it is first sent. */
type Senders = { [P in Provider]?: TestMessageSender<P> };

export class TestPublisher {
  private readonly senders: Senders = {};

  async publish(plan: AgentQueuePlan, filter: HeaderFilter, message: TestMessage): Promise<PublishOutcome> {
    const body = Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength);
    const messageId = `qs-test-${randomUUID()}`;
    // What the engine will read, as published.
    const published = this.sender(plan.provider).published(message, messageId);
    if (!matches(filter, new MessageView(published.headers, body))) {
      const unmatched = filterKeys(filter);
      const own = headerKeys(filter).filter((k) => published.ownKeys.includes(k));
      return {
        ok: false,
        reason:
          own.length > 0
            ? `your split's filter is on ${own.join(', ')}, which the agent sets on every test message itself (message-id: a new qs-test-… id; content-type: the one you chose), so no test message can match it: a test message must come back to you`
            : `its headers (or body) do not match your split's filter (on ${unmatched.join(', ')}): a test message must come back to you`,
      };
    }
    try {
      await this.send(plan.provider, plan, body, message, messageId);
      return { ok: true, messageId };
    } catch (err) {
      return {
        ok: false,
        reason: `the broker refused it: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  }

  private send<P extends Provider>(
    provider: P,
    plan: PlanFor<P>,
    body: Buffer,
    message: TestMessage,
    messageId: string,
  ): Promise<void> {
    return this.sender(provider).send(plan, body, message, messageId);
  }

  private sender<P extends Provider>(provider: P): TestMessageSender<P> {
    // Key and value types correlate per provider (registry.ts agentProvider says why the cast).
    const senders = this.senders as { [K in P]?: TestMessageSender<P> };
    return (senders[provider] ??= testMessageSender(provider));
  }

  async close(): Promise<void> {
    const senders: (TestMessageSender<Provider> | undefined)[] = Object.values(this.senders);
    await Promise.all(senders.map((s) => s?.close()));
  }
}
