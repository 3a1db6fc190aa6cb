// "Send Test Message…": publishes one message with the user's filter headers to the REAL source
// of a split queue, so it travels the whole way (queue-agent → session shadow → sidecar →
// debugged process). The broker connection is resolved exactly as the sidecar resolves it
// (laptop/brokerConnection.ts: the container's env, ConfigMaps/Secrets read with the user's own
// credentials, local overrides, address map). Loaded lazily: it pulls amqplib and kafkajs.
import * as l10n from '@vscode/l10n';
import type { Provider } from '../../core/providers';
import { randomUUID } from 'node:crypto';
import type { WorkloadLike } from '../../core/queueConfig/podTemplate';
import { resolveWorkload } from '../../core/queueConfig/resolveWorkload';
import { formatFieldError } from '../../core/result';
import { AddressMap } from '../../laptop/addressMap';
import { declaredConfigMaps } from '../../laptop/declaredConfigMaps';
import { resolveConnections } from '../../laptop/brokerConnection';
import { laptopProvider } from '../../laptop/providers/registry';
import type { OutgoingTestMessage } from '../../laptop/testMessage';
import { Redactor } from '../../laptop/redact';
import type { KubeConnection } from '../kube/connection';
import { KubeProblem } from '../kube/errors';
import { declaredWorkload } from '../model/workloads';

export interface TestMessage {
  queue: string;
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  contentType?: string;
}

export interface SentMessage {
  messageId: string;
  provider: Provider;
  /** The topic or queue it went to. */
  destination: string;
}

export async function sendTestMessage(
  connection: KubeConnection,
  workload: WorkloadLike,
  message: TestMessage,
  local: { env: Readonly<Record<string, string>>; addressMap: Readonly<Record<string, string>> },
  log: (line: string) => void,
): Promise<SentMessage> {
  // The declared source, not the application shadow the live env (or config file) names during a split.
  const declared = declaredWorkload(workload);
  const kube = {
    kc: connection.kc,
    context: connection.target.context,
    namespace: connection.target.namespace,
  };
  const resolved = resolveWorkload(declared, await declaredConfigMaps(kube, declared));
  if (!resolved.ok)
    throw new KubeProblem(
      l10n.t(
        "The workload's queue declaration is invalid: {0}",
        resolved.errors.map(formatFieldError).join(' | '),
      ),
      l10n.t('Fix the telepresence.io/queue-config annotation, then try again.'),
      'other',
    );
  const queue = resolved.value.queues.find((q) => q.name === message.queue);
  if (queue === undefined)
    throw new KubeProblem(
      l10n.t('The workload declares no queue "{0}".', message.queue),
      l10n.t('Pick one of {0}.', resolved.value.queues.map((q) => q.name).join(', ')),
      'not-found',
    );
  const redactor = new Redactor();
  const [resolvedConnection] = await resolveConnections([queue], {
    kube,
    overrides: new Map(Object.entries(local.env)),
    addressMap: AddressMap.parse(local.addressMap, 'queueSplit.addressMap'),
    redactor,
  });
  if (resolvedConnection === undefined) throw new Error('no broker connection resolved');
  const messageId = `qs-test-${randomUUID()}`;
  const broker = resolvedConnection.broker;
  log(
    `sending test message ${messageId} to ${queue.provider} ${queue.source} via ${broker.display} (headers ${Object.keys(message.headers).join(', ') || 'none'})`,
  );

  const addressMap = AddressMap.parse(local.addressMap, 'queueSplit.addressMap');
  const outgoing: OutgoingTestMessage = { ...message, messageId, source: queue.source };
  await laptopProvider(broker.provider).publishTestMessage(broker, outgoing, {
    addressMap,
    log: (line) => log(redactor.redact(line)),
  });
  return { messageId, provider: broker.provider, destination: queue.source };
}
