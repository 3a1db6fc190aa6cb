// Every message the extension shows goes through here, so that each kind can be silenced with
// `queueSplit.notifications.*`, every message is also in the log, and errors always carry a
// suggested action and a way to the log. Nothing here opens the log by itself.
import * as vscode from 'vscode';
import { openSettingCommand, type Fix } from './model/fixes';
import { settings } from './settings';

export interface Action {
  title: string;
  run: () => unknown;
}

/** Copied command lines are said in the log and in a notification (the clipboard cannot be seen). */
let onCopied: ((what: string, text: string, copied: boolean) => void) | undefined;

/** Shows one setting in the Settings editor (a machine setting of a remote window: its Remote tab). */
export function openSetting(setting: string): Thenable<unknown> {
  const { command, arg } = openSettingCommand(setting, vscode.env.remoteName !== undefined);
  return vscode.commands.executeCommand(command, arg);
}

/** A fix (model/fixes.ts) as a button. */
export function fixAction(f: Fix): Action {
  switch (f.kind) {
    case 'setting':
      return { title: f.title, run: () => openSetting(f.setting) };
    case 'command':
      return { title: f.title, run: () => vscode.commands.executeCommand(f.command, ...(f.args ?? [])) };
    case 'copy':
      return {
        title: f.title,
        run: async () => {
          try {
            await vscode.env.clipboard.writeText(f.text);
            onCopied?.(f.what, f.text, true);
          } catch {
            // A browser workbench may refuse the clipboard: the text is still said in full.
            onCopied?.(f.what, f.text, false);
          }
        },
      };
    case 'open':
      return {
        title: f.title,
        run: () => vscode.window.showTextDocument(vscode.Uri.file(f.path), { preview: false }),
      };
  }
}

export class Notifier {
  constructor(private readonly log: vscode.LogOutputChannel) {
    onCopied = (what, text, copied) =>
      copied
        ? this.info(vscode.l10n.t('Copied {0} to the clipboard: {1}', what, text))
        : this.warn(vscode.l10n.t('Could not use the clipboard; {0}: {1}', what, text));
  }

  private showLogs: Action = { title: vscode.l10n.t('Show Logs'), run: () => this.log.show(true) };

  private async present(
    show: (message: string, ...items: string[]) => Thenable<string | undefined>,
    message: string,
    actions: readonly Action[],
  ): Promise<void> {
    const picked = await show(message, ...actions.map((a) => a.title));
    const action = actions.find((a) => a.title === picked);
    if (action !== undefined) await action.run();
  }

  /** Success and information: "split active", "test message sent". */
  info(message: string, ...actions: Action[]): void {
    this.log.info(message);
    if (settings.notify('info')) void this.present(vscode.window.showInformationMessage, message, actions);
  }

  warn(message: string, suggestedAction?: string, ...actions: Action[]): void {
    const text = suggestedAction !== undefined ? `${message} ${suggestedAction}` : message;
    this.log.warn(text);
    if (settings.notify('warnings'))
      void this.present(vscode.window.showWarningMessage, text, [...actions, this.showLogs]);
  }

  /** An error always says what to do next. */
  error(message: string, suggestedAction: string, ...actions: Action[]): void {
    const text = `${message} ${suggestedAction.startsWith('→') ? suggestedAction : `→ ${suggestedAction}`}`;
    this.log.error(text);
    if (settings.notify('errors'))
      void this.present(vscode.window.showErrorMessage, text, [...actions, this.showLogs]);
  }

  /**
   * Runs `task` with visible progress: a notification (cancellable when `onCancel` is given),
   * or only the status bar when `queueSplit.notifications.progress` is off.
   */
  progress<T>(
    title: string,
    task: (report: (message: string) => void, token: vscode.CancellationToken) => Promise<T>,
    options: { cancellable?: boolean } = {},
  ): Thenable<T> {
    const asNotification = settings.notify('progress');
    return vscode.window.withProgress(
      {
        location: asNotification ? vscode.ProgressLocation.Notification : vscode.ProgressLocation.Window,
        title,
        cancellable: asNotification && options.cancellable === true,
      },
      (progress, token) => {
        let last = '';
        const report = (message: string) => {
          if (message === last) return;
          last = message;
          this.log.info(`${title}: ${message}`);
          progress.report({ message });
        };
        return task(report, token);
      },
    );
  }
}

/** An error thrown by extension code that knows what the user should do. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly suggestedAction: string,
    readonly actions: Action[] = [],
    readonly fixes: readonly Fix[] = [],
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/**
 * Any error → (message, suggested action, buttons). The kube layer's and the sidecar's errors
 * carry a suggested action and fixes (model/fixes.ts); a UserError may carry its own actions.
 */
export function explain(err: unknown): { message: string; suggestedAction: string; actions: Action[] } {
  const e = err as { message?: unknown; suggestedAction?: unknown; actions?: unknown; fixes?: unknown };
  const fixes = Array.isArray(e?.fixes) ? (e.fixes as Fix[]).map(fixAction) : [];
  if (err instanceof UserError)
    return {
      message: err.message,
      suggestedAction: err.suggestedAction,
      actions: [...err.actions, ...fixes],
    };
  if (typeof e?.message === 'string' && typeof e.suggestedAction === 'string')
    return { message: e.message, suggestedAction: e.suggestedAction, actions: fixes };
  const message = err instanceof Error ? err.message : String(err);
  return {
    message,
    suggestedAction: vscode.l10n.t(
      'See the Queue Split log for details; if it looks like a bug, report it with the log.',
    ),
    actions: [],
  };
}
