// The buttons an error offers, as data: what each one does is decided here (pure, testable),
// how it is done is notifications.ts's (it runs them with the `vscode` API). Every error the
// extension shows carries the fixes that apply, and "Show Logs" besides (Notifier.error).
// Titles are localized (@vscode/l10n: extension/l10nBridge.ts).
import * as l10n from '@vscode/l10n';

export type Fix =
  /** Opens the Settings editor on one setting. */
  | { kind: 'setting'; title: string; setting: string }
  /** Runs a command (Select Context/Namespace…, Refresh, Install Controller…). */
  | { kind: 'command'; title: string; command: string; args?: unknown[] }
  /** Copies a command line for somebody to run (a cluster admin, a login in a terminal). */
  | { kind: 'copy'; title: string; text: string; what: string; copies: 'roleBinding' | 'login' }
  /** Opens a file (the kubeconfig in use). */
  | { kind: 'open'; title: string; path: string };

export const fix = {
  setting: (setting: string, title = l10n.t('Open Setting')): Fix => ({ kind: 'setting', title, setting }),
  selectContext: (): Fix => ({
    kind: 'command',
    title: l10n.t('Select Context…'),
    command: 'queueSplit.selectContext',
  }),
  retry: (): Fix => ({ kind: 'command', title: l10n.t('Retry'), command: 'queueSplit.refresh' }),
  installController: (): Fix => ({
    kind: 'command',
    title: l10n.t('Install Controller…'),
    command: 'queueSplit.installController',
  }),
  startSplit: (): Fix => ({
    kind: 'command',
    title: l10n.t('Start Split…'),
    command: 'queueSplit.startSplit',
  }),
  showView: (): Fix => ({
    kind: 'command',
    title: l10n.t('Show Queue Splits'),
    command: 'queueSplit.splits.focus',
  }),
  declareQueues: (): Fix => ({
    kind: 'command',
    title: l10n.t('How to Declare Queues'),
    command: 'workbench.action.openWalkthrough',
    args: ['queuesplit.queue-split#queueSplit.gettingStarted', false],
  }),
  copyRoleBinding: (text: string): Fix => ({
    kind: 'copy',
    copies: 'roleBinding',
    title: l10n.t('Copy RoleBinding Command'),
    text,
    what: l10n.t('the RoleBinding command (for your cluster admin)'),
  }),
  copyLogin: (text: string): Fix => ({
    kind: 'copy',
    copies: 'login',
    title: l10n.t('Copy Login Command'),
    text,
    what: l10n.t('the login command'),
  }),
  openKubeconfig: (path: string): Fix => ({ kind: 'open', title: l10n.t('Open Kubeconfig'), path }),
  /** The same, when the file is not at hand: "Queue Split: Open Kubeconfig" finds it. */
  openKubeconfigFile: (): Fix => ({
    kind: 'command',
    title: l10n.t('Open Kubeconfig'),
    command: 'queueSplit.openKubeconfig',
  }),
};

/**
 * Settings of `machine` or `machine-overridable` scope (package.json; a unit test checks): in a
 * remote window (code-server, SSH, dev containers) the Settings editor lists them under its
 * Remote tab only, so that is where their button opens.
 */
export const MACHINE_SETTINGS: ReadonlySet<string> = new Set([
  'queueSplit.kubeconfig',
  'queueSplit.delivery.relayAmqpUrl',
  'queueSplit.delivery.relaySqsEndpoint',
  'queueSplit.env',
  'queueSplit.install.image',
  'queueSplit.sidecar.nodePath',
]);

/** The command and argument that show `setting` in the Settings editor. */
export function openSettingCommand(setting: string, remote: boolean): { command: string; arg: unknown } {
  return remote && MACHINE_SETTINGS.has(setting)
    ? { command: 'workbench.action.openRemoteSettings', arg: { query: setting } }
    : { command: 'workbench.action.openSettings', arg: setting };
}

/** Fixes without repeats (by title), in order. */
export function uniqueFixes(fixes: readonly (Fix | undefined)[]): Fix[] {
  const seen = new Set<string>();
  const out: Fix[] = [];
  for (const f of fixes) {
    if (f === undefined || seen.has(f.title)) continue;
    seen.add(f.title);
    out.push(f);
  }
  return out;
}
