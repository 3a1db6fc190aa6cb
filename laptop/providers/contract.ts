// What a provider is on the developer's machine, to the extension and the sidecar alike: the
// connection a queue's resolved env describes, the env-delivery check that this machine reaches
// the broker and logs in, and Send Test Message straight into the source. Each provider exports
// one LaptopProvider (laptop/<provider>.ts); laptop/providers/registry.ts lists them.
import type { Provider } from '../../core/providers';
import type { ResolvedQueueOf } from '../../core/queueConfig/resolveQueues';
import type { EnvRole } from '../../core/queueConfig/resolvedTypes';
import type { WarningCode } from '../../core/sidecarProtocol';
import type { AddressMap } from '../addressMap';
import type { Redactor } from '../redact';
import type { OutgoingTestMessage } from '../testMessage';

/** What a provider builds its connection from: the queue's resolved env by role. */
export interface QueueEnv {
  /** As the local process sees it (address map applied). */
  value(role: EnvRole): string | undefined;
  /** As the workload declares it. */
  raw(role: EnvRole): string | undefined;
  /** The env var of a role, for messages. */
  envName(role: EnvRole): string;
  /** The CA bundle of a TLS queue, when one is declared or given. */
  ca: string | undefined;
  addressMap: AddressMap;
  redactor: Redactor;
}

/** What every provider's connection has. */
export interface ConnectionBase<P extends Provider> {
  provider: P;
  /** For people: where it connects (no credentials). */
  display: string;
}

/** A warning for the `ready` line of env delivery. */
export interface EnvWarning {
  code: WarningCode;
  message: string;
  suggestedAction: string;
}

export interface LaptopProvider<P extends Provider, C extends ConnectionBase<P>> {
  readonly provider: P;
  /** The connection a queue's resolved env describes; throws a SidecarError naming the env var
   * that lacks a usable value. */
  connection(queue: ResolvedQueueOf<P>, env: QueueEnv): C;
  /** env delivery: the broker accepts a connection from this machine and the login, within
   * `timeoutMs`; rejects with a SidecarError that names `queue`'s broker. */
  checkReach(queue: string, connection: C, map: AddressMap, timeoutMs: number): Promise<void>;
  /** env delivery: what the debugged process, connecting by itself, cannot do with this
   * connection as resolved here (Kafka: advertised broker addresses). */
  envWarning(connection: C): EnvWarning | undefined;
  /** Send Test Message without a sidecar: publishes durably into the source. `log` takes the
   * client's warnings, already redacted. */
  publishTestMessage(
    connection: C,
    message: OutgoingTestMessage,
    dial: { addressMap: AddressMap; log: (line: string) => void },
  ): Promise<void>;
}
