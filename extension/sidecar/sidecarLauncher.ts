// The sidecar process of a split, as this window runs it: its command (the configured Node, else
// VS Code's own runtime as Node), the files it needs (a 0600 settings file, the env and state
// files) in the extension's storage, its arguments from the request and the settings, the
// credentials it gets in its environment (QUEUE_SPLIT_SECRET_SETTINGS: env values and relay
// broker URLs with their passwords from VS Code's secret storage), and the preflight run that
// checks a relay or env split before it exists.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { SECRET_SETTINGS_ENV, SESSION_SECRET_ENV, type ErrorMessage } from '../../core/sidecarProtocol';
import type { KubeconfigFiles } from '../../core/kubeconfig';
import type { BrokerSecrets } from '../brokerSecrets';
import { sidecarError } from '../model/sidecarErrors';
import {
  preflightArgs,
  safeFileName,
  secretSettingsContent,
  settingsFileContent,
  sidecarArgs,
  sidecarKubeconfig,
} from '../model/sidecarArgs';
import type { QueueSplit, SplitRequest } from '../model/types';
import { type Notifier, UserError } from '../notifications';
import { settings } from '../settings';
import { SidecarProcess, type SidecarSpawn } from './process';

/** The sidecar stops delivery, deletes the split and waits this long for the drain. */
export const DETACH_TIMEOUT_SECONDS = 120;
/** A preflight's checks are bounded to seconds each (sidecar/modePreflight.ts); this bounds the process. */
const PREFLIGHT_TIMEOUT_MS = 60_000;

export class SidecarLauncher {
  /** The last bad `queueSplit.delivery.rejectAfterAttempts` told about (told once, not per start). */
  private toldRejectAfter: string | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly notifier: Notifier,
    private readonly brokerSecrets: BrokerSecrets,
  ) {}

  /** The sidecar's QUEUE_SPLIT_SECRET_SETTINGS for `request`: queueSplit.env with the stored
   * values over it, and the relay brokers with their stored passwords. Never logged. */
  async credentials(request: SplitRequest): Promise<string | undefined> {
    return secretSettingsContent({
      env: await this.brokerSecrets.envOverrides(),
      ...(request.relay !== undefined
        ? { relayBrokers: await this.brokerSecrets.relayBrokers(request.relay.brokers) }
        : {}),
    });
  }

  /** Starts the sidecar that serves `split`; `files` (settings, env, state) go when it exits. */
  launch(
    request: SplitRequest,
    split: QueueSplit,
    kubeconfigFiles: KubeconfigFiles | undefined,
    credentials: string | undefined,
    sessionSecret?: string,
  ): { process: SidecarProcess; files: string[] } {
    const kube = sidecarKubeconfig(kubeconfigFiles);
    const dir = this.storageDir();
    const base = safeFileName(`${request.target.context}-${request.target.namespace}-${split.metadata.name}`);
    const files: string[] = [];
    const settingsFile = this.writeSettings(dir, base, request);
    if (settingsFile !== undefined) files.push(settingsFile);
    const envOut = request.mode === 'env' ? path.join(dir, `${base}.env`) : undefined;
    if (envOut !== undefined) files.push(envOut);
    const stateFile = path.join(dir, `${base}.state.json`);
    files.push(stateFile);
    const rejectAfter = settings.rejectAfterAttempts();
    if (rejectAfter.error !== undefined && rejectAfter.error !== this.toldRejectAfter) {
      this.toldRejectAfter = rejectAfter.error;
      this.notifier.warn(rejectAfter.error, vscode.l10n.t('Set it to a number of attempts, e.g. 8, or 0.'), {
        title: vscode.l10n.t('Open Settings'),
        run: () =>
          vscode.commands.executeCommand(
            'workbench.action.openSettings',
            'queueSplit.delivery.rejectAfterAttempts',
          ),
      });
    }
    const args = sidecarArgs({
      splitName: split.metadata.name,
      target: request.target,
      ...(kube.kubeconfig !== undefined ? { kubeconfig: kube.kubeconfig } : {}),
      mode: request.mode,
      ...(request.httpTarget !== undefined ? { httpTarget: request.httpTarget } : {}),
      leaseSeconds: settings.leaseSeconds(),
      readyTimeoutSeconds: settings.readyTimeoutSeconds(),
      detachTimeoutSeconds: DETACH_TIMEOUT_SECONDS,
      rejectAfterAttempts: rejectAfter.attempts,
      stateFile,
      ...(envOut !== undefined ? { envOut } : {}),
      ...(settingsFile !== undefined ? { settingsFile } : {}),
    });
    const command = this.sidecarCommand(args, kube.env, credentials);
    // The secret goes in the child's environment (private to it), never on its command line.
    const spec =
      sessionSecret !== undefined
        ? { ...command, env: { ...command.env, [SESSION_SECRET_ENV]: sessionSecret } }
        : command;
    this.log.info(
      `starting sidecar for ${split.metadata.name}: ${path.basename(spec.node)} ${path.basename(spec.script)} ${args.join(' ')}`,
    );
    return { process: new SidecarProcess(spec), files };
  }

  /**
   * What a `relay` or `env` session needs from this machine (the local broker; direct broker
   * reach and login), checked by the sidecar before the split exists: creating it scales down and
   * rolls the team's workload. `http` is not: its target is the process the
   * debug launch starts after the sidecar. A failure creates nothing and says what to change.
   */
  async preflight(
    request: SplitRequest,
    kubeconfigFiles: KubeconfigFiles | undefined,
    credentials: string | undefined,
  ): Promise<void> {
    if (request.mode === 'http') return;
    const kube = sidecarKubeconfig(kubeconfigFiles);
    const dir = this.storageDir();
    const base = safeFileName(
      `${request.target.context}-${request.target.namespace}-${request.workload.name}-preflight`,
    );
    const settingsFile = this.writeSettings(dir, base, request);
    try {
      const spec = this.sidecarCommand(
        preflightArgs({
          workload: request.workload,
          queues: request.queues,
          owner: request.owner,
          target: request.target,
          ...(kube.kubeconfig !== undefined ? { kubeconfig: kube.kubeconfig } : {}),
          mode: request.mode,
          ...(settingsFile !== undefined ? { settingsFile } : {}),
        }),
        kube.env,
        credentials,
      );
      this.log.info(`preflight of ${request.workload.name} (${request.mode}) before creating the split`);
      const child = new SidecarProcess(spec);
      let error: ErrorMessage | undefined;
      child.onLog((line) => this.log.info(`[sidecar preflight] ${line}`));
      child.onMessage((m) => {
        if (m.type === 'error') error = m;
      });
      const timer = setTimeout(() => void child.stop(5_000), PREFLIGHT_TIMEOUT_MS);
      const exit = await child.exited.finally(() => clearTimeout(timer));
      if (exit.code === 0) return;
      if (error !== undefined) {
        // The notification frames it as the preflight itself: the sidecar's own frame (for a
        // terminal: "Preflight (relay delivery): … Nothing was created: …") would say it twice.
        const inner = error.message
          .replace(/^Preflight \(\w+ delivery\): /, '')
          .replace(/\s*Nothing was created: .*$/, '');
        const shown = sidecarError(
          { ...error, message: inner },
          { namespace: request.target.namespace, user: request.owner },
        );
        // The code's words are shown; the sidecar's own sentence is the detail in the log.
        this.log.warn(`preflight of ${request.workload.name}: ${error.code}: ${shown.detail}`);
        throw new UserError(
          vscode.l10n.t(
            'Preflight ({0} delivery): {1} Nothing was created: your split and the team’s workload are untouched.',
            request.mode,
            shown.message,
          ),
          shown.suggestedAction,
          [],
          shown.fixes,
        );
      }
      throw new UserError(
        vscode.l10n.t(
          'The preflight of your {0} split of {1} ended without a result (exit code {2}, signal {3}). Nothing was created.',
          request.mode,
          request.workload.name,
          String(exit.code),
          String(exit.signal),
        ),
        vscode.l10n.t('Open the Queue Split output for the sidecar log, then start the split again.'),
      );
    } finally {
      if (settingsFile !== undefined) fs.rmSync(settingsFile, { force: true });
    }
  }

  private storageDir(): string {
    const dir = path.join(this.context.globalStorageUri.fsPath, 'sidecar');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** The sidecar's --settings file for `request` (0600; no credential: those go in its
   * environment), if it needs one. */
  private writeSettings(dir: string, base: string, request: SplitRequest): string | undefined {
    const settingsText = settingsFileContent({
      addressMap: settings.addressMap(),
      ...(request.relay?.to !== undefined ? { relayTo: request.relay.to } : {}),
    });
    if (settingsText === undefined) return undefined;
    const file = path.join(dir, `${base}.settings.json`);
    fs.writeFileSync(file, settingsText, { mode: 0o600 });
    return file;
  }

  /** How to run dist/sidecar.js: the configured Node, else VS Code's own runtime as Node. */
  private sidecarCommand(
    args: string[],
    env: Record<string, string>,
    credentials: string | undefined,
  ): SidecarSpawn {
    const configuredNode = settings.sidecarNodePath();
    const node = configuredNode !== '' ? configuredNode : process.execPath;
    const script = this.context.asAbsolutePath(path.join('dist', 'sidecar.js'));
    if (!fs.existsSync(script))
      throw new UserError(
        vscode.l10n.t('The sidecar bundle {0} is missing.', script),
        vscode.l10n.t('Reinstall the extension (or run `npm run build` in a development checkout).'),
      );
    return {
      node,
      script,
      args,
      env: {
        ...env,
        ...(configuredNode === '' ? { ELECTRON_RUN_AS_NODE: '1' } : {}),
        ...(credentials !== undefined ? { [SECRET_SETTINGS_ENV]: credentials } : {}),
      },
      cwd: path.dirname(script),
    };
  }
}
