// What a provider gives the queue-agent besides its engine's broker port (agent/engine/port.ts):
// the engine of one queue built from the desired plan, a reader of a route's session shadow, and
// the publisher of Send Test Message. Each provider exports one AgentProvider (agent/<name>/
// agentProvider.ts); agent/providers/registry.ts lists them.
import type { AgentRoute, QueuePlanOf } from '../../core/agentProtocol';
import type { MessageHeaders } from '../../core/filter';
import type { Provider } from '../../core/providers';
import type { Engine } from '../engine/contract';
import type { Logger } from '../log';
import type { SessionReader } from '../sessionStream/reader';

/** What the controller tells every queue-agent about the brokers: each provider's settings
 * (BrokerSetting) by flag; an absent one is its default. */
export type EngineSettings = Readonly<Record<string, number>>;

/** A test message as the developer asked for it. */
export interface TestMessage {
  queue: string;
  headers: Record<string, string>;
  body: Uint8Array;
  contentType?: string;
  key?: string;
}

/** How one provider publishes test messages into a queue's source. */
export interface TestMessageSender<P extends Provider> {
  /** The headers the engine will route the message on as published, and which of them the
   * agent sets itself (a filter on those can never match a test message). */
  published(message: TestMessage, messageId: string): { headers: MessageHeaders; ownKeys: readonly string[] };
  /** Publishes it durably into the plan's source; throws what the broker refused. */
  send(plan: QueuePlanOf<P>, body: Buffer, message: TestMessage, messageId: string): Promise<void>;
  /** Closes the connections it opened. */
  close(): Promise<void>;
}

/** How a provider's clients trust a private CA the declaration names: `client` — the engine
 * reads the mounted CA file itself; `process` — only through NODE_EXTRA_CA_CERTS, which holds one
 * file for the whole queue-agent (agent/controller/tlsMounts.ts). Listed per provider in
 * ./registry.ts, where the controller reads it without loading a client. */
export type CaTrust = 'client' | 'process';

export interface AgentProvider<P extends Provider> {
  /** The engine of one queue; throws EngineConfigError (./podEnv.ts) when the pod env cannot
   * make its connection. */
  engine(activationId: string, plan: QueuePlanOf<P>, logger: Logger, settings: EngineSettings): Engine;
  /** A reader of the route's session shadow on this queue. */
  sessionReader(
    plan: QueuePlanOf<P>,
    route: AgentRoute,
    shadow: AgentRoute['shadows'][string],
  ): SessionReader;
  /** A sender of test messages (one per agent; it keeps its connections). */
  testMessages(): TestMessageSender<P>;
}
