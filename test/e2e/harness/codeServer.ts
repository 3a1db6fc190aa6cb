// Starts a private code-server (a real VS Code server) on a free loopback port with throwaway
// user-data and extensions folders — the extensions folder holding dist/queue-split.vsix as
// code-server installed it (installedExtension.ts) — and stops its whole process group. Nothing
// here reads or writes the developer's own VS Code state.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { removeTempDir, signalGroup, tempDir, trackGroup, untrackGroup } from './exitCleanup';
import { copyInstalledExtension } from './installedExtension';
import { codeServerBin } from './paths';
import { freePort } from '../../support/freePort';
export { freePort } from '../../support/freePort';

export interface CodeServer {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  pid: number;
  logFile: string;
  /** VS Code's server-side logs while it runs (one folder per extension host, output channels). */
  logsDir: string;
  /** The server's user-data folder (User/settings.json) while it runs. */
  userDataDir: string;
  stop(): Promise<void>;
}

export interface CodeServerOptions {
  workspace: string;
  /** code-server's stdout and stderr go here. */
  logFile: string;
  /** VS Code's server-side logs (extension host, output channels) are copied here on stop. */
  keepLogsIn?: string;
  /** Merged into the fresh User/settings.json. */
  settings?: Record<string, unknown>;
  /** Over this process's environment, for the server and its extension hosts. */
  env?: Record<string, string>;
  /** Extension folders installed beside the .vsix (copied into the extensions folder and listed
   * in its extensions.json, as `--install-extension` would). */
  installExtensions?: string[];
  /** On: VS Code's Workspace Trust works as on a user's machine (no --disable-workspace-trust),
   * so a folder nobody trusted opens in Restricted Mode. Off (default): every folder is trusted. */
  workspaceTrust?: boolean;
  /** VS Code's display language (`--locale`); it takes effect only with a language pack for it
   * installed (installExtensions): without one the server serves the workbench in English. */
  locale?: string;
  /** Files (name → contents) written into the installed Queue Split's folder, e.g. a test-only
   * translation (l10n/bundle.l10n.<locale>.json, package.nls.<locale>.json) that the .vsix never
   * carries. */
  installedExtensionFiles?: Record<string, string>;
}

/** Settings that keep a test's workbench quiet and deterministic. */
const quietSettings: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'security.workspace.trust.enabled': false,
};

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface LocalizationContribution {
  languageId: string;
  languageName?: string;
  translations: { id: string; path: string }[];
}

/**
 * user-data/languagepacks.json, as VS Code writes it when `--install-extension` installs a
 * language pack: the server serves a display language (`--locale`) only from this list, and the
 * extensions copied in above were not installed by it.
 */
function writeLanguagePacks(userDataDir: string, extensionsDir: string): void {
  const packs: Record<string, unknown> = {};
  for (const dir of fs.readdirSync(extensionsDir)) {
    const manifestFile = path.join(extensionsDir, dir, 'package.json');
    if (!fs.existsSync(manifestFile)) continue;
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as {
      publisher: string;
      name: string;
      version: string;
      contributes?: { localizations?: LocalizationContribution[] };
    };
    for (const loc of manifest.contributes?.localizations ?? [])
      packs[loc.languageId] = {
        hash: `${manifest.publisher}.${manifest.name}-${manifest.version}`,
        extensions: [
          {
            extensionIdentifier: { id: `${manifest.publisher}.${manifest.name}` },
            version: manifest.version,
          },
        ],
        translations: Object.fromEntries(
          loc.translations.map((t) => [t.id, path.join(extensionsDir, dir, t.path)]),
        ),
        label: loc.languageName ?? loc.languageId,
      };
  }
  fs.writeFileSync(path.join(userDataDir, 'languagepacks.json'), JSON.stringify(packs));
}

export async function startCodeServer(options: CodeServerOptions): Promise<CodeServer> {
  const state = tempDir('qs-code-server-');
  const userDataDir = path.join(state, 'user-data');
  const extensionsDir = path.join(state, 'extensions');
  fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  fs.mkdirSync(extensionsDir);
  copyInstalledExtension(extensionsDir);
  if (options.installedExtensionFiles) {
    const installed = fs.readdirSync(extensionsDir).filter((d) => d.startsWith('queuesplit.queue-split-'));
    if (installed.length !== 1)
      throw new Error(`expected one installed Queue Split in ${extensionsDir}: ${installed.join(', ')}`);
    for (const [name, contents] of Object.entries(options.installedExtensionFiles)) {
      const file = path.join(extensionsDir, installed[0]!, name);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, contents);
    }
  }
  for (const folder of options.installExtensions ?? []) {
    const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as {
      publisher: string;
      name: string;
      version: string;
    };
    const relative = `${manifest.publisher}.${manifest.name}-${manifest.version}`;
    const target = path.join(extensionsDir, relative);
    fs.cpSync(folder, target, { recursive: true });
    const listFile = path.join(extensionsDir, 'extensions.json');
    if (fs.existsSync(listFile)) {
      const list = JSON.parse(fs.readFileSync(listFile, 'utf8')) as unknown[];
      list.push({
        identifier: { id: `${manifest.publisher}.${manifest.name}` },
        version: manifest.version,
        location: { $mid: 1, fsPath: target, path: target, scheme: 'file' },
        relativeLocation: relative,
        metadata: { installedTimestamp: Date.now(), source: 'vsix' },
      });
      fs.writeFileSync(listFile, JSON.stringify(list));
    }
  }
  if (options.locale !== undefined) writeLanguagePacks(userDataDir, extensionsDir);
  const trust = options.workspaceTrust === true ? { 'security.workspace.trust.enabled': true } : {};
  fs.writeFileSync(
    path.join(userDataDir, 'User', 'settings.json'),
    JSON.stringify({ ...quietSettings, ...trust, ...options.settings }, null, 2),
  );

  const port = await freePort();
  const args = [
    '--config',
    '/dev/null',
    '--auth',
    'none',
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
    ...(options.workspaceTrust === true ? [] : ['--disable-workspace-trust']),
    '--disable-telemetry',
    '--disable-update-check',
    ...(options.locale !== undefined ? ['--locale', options.locale] : []),
    options.workspace,
  ];
  fs.mkdirSync(path.dirname(options.logFile), { recursive: true });
  const out = fs.openSync(options.logFile, 'a');
  const child = spawn(codeServerBin, args, {
    detached: true, // its own process group: stop() reaches the extension host and watchers too
    stdio: ['ignore', out, out],
    // code-server keeps its own state (last opened folder, heartbeat) under XDG_DATA_HOME.
    env: { ...process.env, ...options.env, XDG_DATA_HOME: path.join(state, 'xdg-data') },
  });
  fs.closeSync(out);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${codeServerBin}`);
  trackGroup(pid);
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited (code ${code}, signal ${signal})`));

  const logs = path.join(userDataDir, 'logs');
  const stop = async () => {
    if (!untrackGroup(pid)) return;
    signalGroup(pid, 'SIGTERM');
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && groupAlive(pid)) await sleep(100);
    if (groupAlive(pid)) signalGroup(pid, 'SIGKILL');
    if (options.keepLogsIn && fs.existsSync(logs)) fs.cpSync(logs, options.keepLogsIn, { recursive: true });
    // The settings as the workbench left them (it rewrites the file when it changes a setting),
    // with URL passwords masked: a test may put one there on purpose (the deprecated
    // password-in-settings case), and test-results/ is scanned for credentials (zz-no-secret-left).
    const userSettings = path.join(userDataDir, 'User', 'settings.json');
    if (options.keepLogsIn && fs.existsSync(userSettings))
      fs.writeFileSync(
        path.join(options.keepLogsIn, 'settings.json'),
        fs.readFileSync(userSettings, 'utf8').replace(/(\/\/[^/:@\s"]*):[^@/\s"]*@/g, '$1:***@'),
      );
    removeTempDir(state);
  };

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const healthy = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (healthy) return { url, pid, logFile: options.logFile, logsDir: logs, userDataDir, stop };
    if (exited !== undefined || Date.now() > deadline) {
      await stop();
      const log = fs.readFileSync(options.logFile, 'utf8').split('\n').slice(-30).join('\n');
      throw new Error(
        `code-server ${exited ?? 'did not answer /healthz within 30s'}.\n--- ${options.logFile} ---\n${log}`,
      );
    }
    await sleep(200);
  }
}

/**
 * Waits until an output channel's log file (e.g. "Queue Split.log", of any extension host of
 * this server) has a line containing `text`: the moment something the extension logs is done.
 */
export async function waitForServerLog(
  server: CodeServer,
  channelFile: string,
  text: string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const files = fs.existsSync(server.logsDir)
      ? fs
          .readdirSync(server.logsDir, { recursive: true, encoding: 'utf8' })
          .filter((f) => path.basename(f) === channelFile)
      : [];
    if (files.some((f) => fs.readFileSync(path.join(server.logsDir, f), 'utf8').includes(text))) return;
    if (Date.now() > deadline) {
      throw new Error(`no "${text}" in ${channelFile} under ${server.logsDir} after ${timeoutMs / 1000}s`);
    }
    // Short: callers act the moment the line is there (e.g. reload right after a command).
    await sleep(10);
  }
}
