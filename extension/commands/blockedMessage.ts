// Queue Split: Retry Blocked Message Now / Reject Blocked Message… — the source's own choices for
// a message the local handler keeps failing, which holds up every message behind it: try it again
// at once (the sidecar ends its backoff wait), or give up on it, settled as the app's own reject
// would (RabbitMQ: rejected without requeue, so dead-lettered by the queue's rules or discarded;
// Kafka: skipped). Reject asks first, in a modal that says what it does on that broker. The
// sidecar's lines say what came of either (tree and status bar follow them).
import * as vscode from 'vscode';
import { blockedText, rejectConfirmation, type BlockedRef } from '../model/blocked';
import type { BlockedDelivery } from '../model/sidecarView';
import type { TreeNode } from '../model/tree';
import { UserError } from '../notifications';
import type { Services } from '../services';
import type { SplitSession } from '../sidecar/splitSession';

/** The context key the command palette entries are enabled by. */
const BLOCKED_CONTEXT = 'queueSplit.hasBlockedMessage';

interface Target {
  session: SplitSession;
  blocked: BlockedDelivery;
}

type Arg = TreeNode | BlockedRef | undefined;

export async function retryBlockedMessage(services: Services, arg?: Arg): Promise<void> {
  const target = await choose(services, arg, vscode.l10n.t('Retry Blocked Message Now'));
  if (target === undefined) return;
  send(target, 'retry');
  services.log.info(`${target.session.label}: retry of ${target.blocked.messageId} requested`);
}

export async function rejectBlockedMessage(services: Services, arg?: Arg): Promise<void> {
  const target = await choose(services, arg, vscode.l10n.t('Reject Blocked Message'));
  if (target === undefined) return;
  const provider = target.session.view.ready?.queues.find((q) => q.name === target.blocked.queue)?.provider;
  const confirm = rejectConfirmation(target.blocked, provider);
  const picked = await vscode.window.showWarningMessage(
    confirm.message,
    { modal: true, detail: confirm.detail },
    confirm.button,
  );
  if (picked !== confirm.button) return;
  send(target, 'reject');
  services.log.info(`${target.session.label}: reject of ${target.blocked.messageId} requested`);
}

function send({ session, blocked }: Target, type: 'retry' | 'reject'): void {
  if (!session.blockedRequest(type, blocked.queue, blocked.messageId))
    throw new UserError(
      type === 'retry'
        ? vscode.l10n.t(
            'The sidecar of {0} is not running, so it cannot retry message {1}.',
            session.label,
            blocked.messageId,
          )
        : vscode.l10n.t(
            'The sidecar of {0} is not running, so it cannot reject message {1}.',
            session.label,
            blocked.messageId,
          ),
      vscode.l10n.t('Start the split again: an unsettled message is still in the session shadow.'),
    );
}

/** The blocked message the command is about: the tree row's, a notice's, or one to pick. */
async function choose(services: Services, arg: Arg, title: string): Promise<Target | undefined> {
  const live = services.sessions.list().filter((s) => s.live);
  if (arg?.kind === 'route' || arg?.kind === 'blocked') {
    const name = arg.kind === 'route' ? arg.split.metadata.name : arg.split;
    const queue = arg.queue;
    const session = live.find((s) => s.name === name);
    const blocked = session?.view.blocked.find(
      (b) => b.queue === queue && (arg.kind === 'route' || b.messageId === arg.messageId),
    );
    if (session === undefined || blocked === undefined)
      throw new UserError(
        arg.kind === 'blocked'
          ? vscode.l10n.t(
              'Nothing of {0} in split {1} is blocked now (message {2} was delivered or rejected meanwhile).',
              queue,
              name,
              arg.messageId,
            )
          : vscode.l10n.t('Nothing of {0} in split {1} is blocked now.', queue, name),
        vscode.l10n.t('Nothing to do: its messages flow.'),
      );
    return { session, blocked };
  }
  const all = live.flatMap((session) => session.view.blocked.map((blocked) => ({ session, blocked })));
  if (all.length === 0) {
    services.notifier.info(
      vscode.l10n.t('No delivery of your splits in this window is blocked: every message flows.'),
    );
    return undefined;
  }
  if (all.length === 1) return all[0];
  const picked = await vscode.window.showQuickPick(
    all.map((t) => ({
      label: blockedText(t.blocked),
      description: `${t.session.label} · ${t.blocked.queue}`,
      target: t,
    })),
    { title, placeHolder: vscode.l10n.t('Which blocked message?') },
  );
  return picked?.target;
}

/** Keeps the context key that enables the commands in the palette: only while something is blocked. */
export function registerBlockedContext(services: Services): vscode.Disposable {
  let last: boolean | undefined;
  const update = () => {
    const blocked = services.sessions.list().some((s) => s.live && s.view.blocked.length > 0);
    if (blocked === last) return;
    last = blocked;
    void vscode.commands.executeCommand('setContext', BLOCKED_CONTEXT, blocked);
  };
  update();
  return services.sessions.onDidChange(update);
}
