// The extension's log: one LogOutputChannel, shown only when the user asks for it, and
// without taking focus from the editor.
import * as vscode from 'vscode';

export function registerLogging(context: vscode.ExtensionContext): vscode.LogOutputChannel {
  const channel = vscode.window.createOutputChannel('Queue Split', { log: true });
  context.subscriptions.push(
    channel,
    vscode.commands.registerCommand('queueSplit.showLogs', () => channel.show(true)),
  );
  return channel;
}
