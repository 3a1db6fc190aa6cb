// Entry point of the VS Code extension. It only wires things together: each feature lives in
// its own module and registers its disposables with the one owner passed in here.
import * as vscode from 'vscode';
import { registerLogging } from './logging';

export function activate(context: vscode.ExtensionContext): void {
  const log = registerLogging(context);
  log.info(`Queue Split ${context.extension.packageJSON.version as string} activated`);
}

export function deactivate(): void {
  // Disposables registered on the context are released by VS Code.
}
