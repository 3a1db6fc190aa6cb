// What `@vscode/l10n` is inside the extension's bundles (esbuild.config.mjs aliases it here).
// Modules that must stay free of `vscode` (extension/model/, which unit tests import without
// VS Code) localize with `import * as l10n from '@vscode/l10n'`: in unit tests that is the real
// package (no bundle configured: the English text, formatted); in the extension host it is this
// file, so they read the bundle VS Code loaded for the display language, as `vscode.l10n.t` does,
// in the activation bundle and the lazy ones alike (each lazy bundle would hold its own,
// unconfigured copy of the package). `npm run l10n:export` finds both kinds of call.
import * as vscode from 'vscode';
import type * as packageL10n from '@vscode/l10n';

// The two `t` share their overloads (message + args, named args, { message, args, comment });
// VS Code's overload set is not assignable as one signature, hence the cast.
export const t: typeof packageL10n.t = (...args: unknown[]): string =>
  (vscode.l10n.t as (...a: unknown[]) => string)(...args);

/** VS Code configures the bundle itself; nothing in the extension host may replace it. */
export function config(): never {
  throw new Error('@vscode/l10n config() is not used in the extension host: vscode.l10n holds the bundle');
}
