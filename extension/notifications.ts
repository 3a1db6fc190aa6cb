// Every message the extension shows goes through here, so that each kind can be silenced with
// `queueSplit.notifications.*`, every message is also in the log, and errors always carry a
// suggested action and a way to the log. Nothing here opens the log by itself.
import * as vscode from 'vscode';
import { settings } from './settings';

export interface Action {
  title: string;
  run: () => unknown;
}

export class Notifier {
  constructor(private readonly log: vscode.LogOutputChannel) {}

  private showLogs: Action = { title: 'Show Logs', run: () => this.log.show(true) };

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
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/** Any error → (message, suggested action). The sidecar's and kube layer's errors carry one. */
export function explain(err: unknown): { message: string; suggestedAction: string; actions: Action[] } {
  if (err instanceof UserError)
    return { message: err.message, suggestedAction: err.suggestedAction, actions: err.actions };
  const withAction = err as { message?: unknown; suggestedAction?: unknown };
  if (typeof withAction?.message === 'string' && typeof withAction.suggestedAction === 'string')
    return { message: withAction.message, suggestedAction: withAction.suggestedAction, actions: [] };
  const message = err instanceof Error ? err.message : String(err);
  return {
    message,
    suggestedAction: 'See the Queue Split log for details; if it looks like a bug, report it with the log.',
    actions: [],
  };
}
