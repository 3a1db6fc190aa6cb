// Queue Split: Send Test Message… — publishes one message carrying my filter's headers to the
// real source of one of my split queues, with a body typed in or taken from the active editor
// (its selection, else the whole document). A split this window serves with http or relay goes
// through its sidecar and the queue-agent (README "How your messages reach your laptop"): no
// broker reach needed, and the agent accepts only my filter's headers. What is sent (headers and
// body fields matching my own filter, so no teammate's values) is model/testMessage.ts. Otherwise (env delivery,
// or a split served elsewhere) the extension publishes itself (RabbitMQ: amqplib; Kafka: kafkajs).
import { sourceLabel } from '../../core/providers';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { planTestMessage } from '../model/testMessage';
import { namespaceOfNode, type TreeNode } from '../model/tree';
import { UserError } from '../notifications';
import type { Services } from '../services';
import { settings } from '../settings';
import { chooseMySplit } from './pickers';
import { specFilter } from '../../core/crd/splitFilter';

interface BodyChoice {
  body: Buffer;
  contentType?: string;
  what: string;
}

function guessContentType(text: string, languageId?: string): string | undefined {
  if (languageId === 'json' || languageId === 'jsonc') return 'application/json';
  try {
    JSON.parse(text);
    return 'application/json';
  } catch {
    return languageId === 'xml' ? 'application/xml' : 'text/plain; charset=utf-8';
  }
}

async function chooseBody(): Promise<BodyChoice | undefined> {
  const editor = vscode.window.activeTextEditor;
  const items: (vscode.QuickPickItem & { id: 'type' | 'editor' })[] = [
    { id: 'type', label: `$(edit) ${vscode.l10n.t('Type the message body…')}` },
  ];
  if (editor !== undefined) {
    const selection = !editor.selection.isEmpty;
    items.unshift({
      id: 'editor',
      label: `$(file) ${
        selection
          ? vscode.l10n.t('Selection in {0}', path.basename(editor.document.fileName))
          : vscode.l10n.t('Contents of {0}', path.basename(editor.document.fileName))
      }`,
      description: `${editor.document.languageId}`,
    });
  }
  const picked =
    items.length === 1
      ? items[0]
      : await vscode.window.showQuickPick(items, {
          title: vscode.l10n.t('Send Test Message: body'),
          ignoreFocusOut: true,
        });
  if (picked === undefined) return undefined;
  if (picked.id === 'editor' && editor !== undefined) {
    const text = editor.selection.isEmpty
      ? editor.document.getText()
      : editor.document.getText(editor.selection);
    const contentType = guessContentType(text, editor.document.languageId);
    return {
      body: Buffer.from(text, 'utf8'),
      ...(contentType !== undefined ? { contentType } : {}),
      what: path.basename(editor.document.fileName),
    };
  }
  const text = await vscode.window.showInputBox({
    title: vscode.l10n.t('Send Test Message: body'),
    prompt: vscode.l10n.t('The message body (sent as UTF-8 text; JSON is sent as application/json)'),
    value: '{"hello": "from Queue Split"}',
    ignoreFocusOut: true,
  });
  if (text === undefined) return undefined;
  const contentType = guessContentType(text);
  return {
    body: Buffer.from(text, 'utf8'),
    ...(contentType !== undefined ? { contentType } : {}),
    what: vscode.l10n.t('typed body'),
  };
}

export async function sendTestMessage(services: Services, node?: TreeNode): Promise<void> {
  const api = await services.cluster.api(namespaceOfNode(node));
  let split: QueueSplit | undefined;
  let queue: string | undefined;
  if (node?.kind === 'route' && node.mine) {
    split = node.split;
    queue = node.queue;
  } else {
    const choice = await chooseMySplit(
      services,
      api,
      vscode.l10n.t('Send Test Message: to which split?'),
      (s) => s.metadata.deletionTimestamp === undefined,
    );
    if (choice === undefined) return;
    split = choice.split ?? (await api.getSplit(choice.name));
  }
  if (split === undefined)
    throw new UserError(vscode.l10n.t('That split is gone.'), vscode.l10n.t('Start a split first.'));
  if (queue === undefined) {
    if (split.spec.queues.length === 1) queue = split.spec.queues[0];
    else {
      queue = await vscode.window.showQuickPick(split.spec.queues, {
        title: vscode.l10n.t('Send Test Message: which queue?'),
        ignoreFocusOut: true,
      });
      if (queue === undefined) return;
    }
  }
  const body = await chooseBody();
  if (body === undefined) return;
  // Headers (and body fields) that match this split's own filter, hence no teammate's.
  const plan = planTestMessage(specFilter(split.spec), body);
  if ('error' in plan) throw new UserError(`${split.metadata.name}: ${plan.error}`, plan.fix);
  const session = services.sessions.byName(api.target.context, api.target.namespace, split.metadata.name);
  if (session !== undefined && session.live && session.request.mode !== 'env') {
    const result = await session.publish({
      queue: queue!,
      headers: { ...plan.headers },
      body: plan.body.toString('utf8'),
      ...(plan.contentType !== undefined ? { contentType: plan.contentType } : {}),
    });
    if (!result.published)
      throw new UserError(
        vscode.l10n.t(
          'The queue-agent did not publish the test message to {0}: {1}.',
          queue!,
          result.reason ?? vscode.l10n.t('no reason given'),
        ),
        vscode.l10n.t('Check the split in the Queue Splits view (it must be Active), then try again.'),
      );
    services.log.info(`test message to ${queue} published by the queue-agent (headers ${plan.headerNames})`);
    services.notifier.info(
      vscode.l10n.t(
        'Test message sent to {0} through the queue-agent with {1}: {2}, id {3}.',
        queue!,
        plan.shown,
        body.what,
        result.messageId ?? '?',
      ),
    );
    return;
  }
  const workload = await api.readWorkload(split.spec.workload.kind, split.spec.workload.name);
  const { sendTestMessage: send } = await import('../publish/testMessage');
  const sent = await send(
    api.connection,
    workload,
    {
      queue: queue!,
      headers: plan.headers,
      body: plan.body,
      ...(plan.contentType !== undefined ? { contentType: plan.contentType } : {}),
    },
    { env: await services.brokerSecrets.envOverrides(), addressMap: settings.addressMap() },
    (line) => services.log.info(line),
  );
  // The user's own header values may be shown to them; the log line above has the keys only.
  services.notifier.info(
    vscode.l10n.t(
      'Test message sent to {0} ({1} {2}) with {3}: {4}, id {5}.',
      queue!,
      sourceLabel(sent.provider),
      sent.destination,
      plan.shown,
      body.what,
      sent.messageId,
    ),
  );
}
