// Debug integration for ANY debugger (node, python, go, java, ...): a launch configuration naming
// a split in its env (`"env": {"QUEUE_SPLIT": "orders"}`, the split defined in
// .vscode/queue-split.json — model/launchSplits.ts, docs/launch-configurations.md), or carrying
// the old inline `queueSplit` block, gets its split ensured and a sidecar started before the debugger starts;
// in env mode the split's env (source → session shadow, ...) is merged into the field that
// debugger reads (model/debuggerEnv.ts: `env`, or cppdbg's `environment` list).
// The split stops when the last debug session using it ends and its linger (queueSplit.linger,
// README) runs out, unless the block says persist.
//
// Registered for '*' — VS Code activates us for that through the `onDebug` activation event
// (it fires `onDebugResolve:<type>` only for the concrete type). Guards: a configuration that
// already carries our marker is passed through (double resolution: compounds, restarts, child
// sessions that copy their parent's configuration); concurrent launches of one workload share
// one split (SessionManager.ensure).
// A restart of an adapter without its own restart request ends the debug session and starts it
// again with the same resolved configuration: the start takes the hold again. Cancelling a
// launch that is still starting (the token) releases the split at once.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { chooseWorkload } from '../commands/pickers';
import { confirmRestart } from '../commands/startSplit';
import { mergeSplitEnv } from '../model/debuggerEnv';
import { parseDotenv, parseLaunchBlock, RESOLVED_MARKER, type LaunchParse } from '../model/launch';
import { SPLITS_FILE, SPLITS_FILE_SEGMENTS, splitReference } from '../model/launchSplits';
import { checkOverlap, defaultFilterText } from '../model/startSplit';
import type { SplitRequest } from '../model/types';
import { parseFilter } from '../../core/filter';
import { explain, UserError } from '../notifications';
import { relayFromSettings } from '../relaySettings';
import type { Services } from '../services';
import { settings } from '../settings';
import { SidecarFailure, type SplitSession } from '../sidecar/splitSession';

interface Marker {
  key: string;
  split: string;
}

/**
 * Said once per launch, in the activation progress shown anyway: activating rolls the workload's
 * pods, and the linger (README, queueSplit.linger) is why a debug restart does not roll them again.
 */
const activationNote = (): string =>
  vscode.l10n.t(
    "(activating a split restarts the workload's pods; it lingers after debugging so a restart does not)",
  );

/** A launch that resolved but whose debug session never started releases its split after this. */
const START_DEADLINE_MS = 120_000;

function markerOf(configuration: vscode.DebugConfiguration): Marker | undefined {
  const value = configuration[RESOLVED_MARKER] as unknown;
  if (typeof value !== 'object' || value === null) return undefined;
  const { key, split } = value as { key?: unknown; split?: unknown };
  return typeof key === 'string' && typeof split === 'string' ? { key, split } : undefined;
}

/** A function, not an inline check: TypeScript keeps a property's narrowing across awaits. */
const isCancelled = (token: vscode.CancellationToken | undefined) => token?.isCancellationRequested === true;

/** The launch was cancelled while it waited for the split (VS Code's token). */
class LaunchCancelled extends Error {}

export class QueueSplitDebugProvider implements vscode.DebugConfigurationProvider {
  private readonly pending = new Map<string, NodeJS.Timeout>();
  /** The split each resolved launch holds (marker key → session), to hold it again on a restart. */
  private readonly held = new Map<string, { session: SplitSession; persist: boolean }>();
  /** Launches told about the old inline block this window (told once each). */
  private readonly toldToMigrate = new Set<string>();

  constructor(private readonly services: Services) {}

  /** Wires the provider and the session tracking; everything is disposed with the extension. */
  register(): vscode.Disposable[] {
    return [
      vscode.debug.registerDebugConfigurationProvider('*', this),
      vscode.debug.onDidStartDebugSession((session) => {
        const marker = markerOf(session.configuration);
        if (marker === undefined) return;
        const timer = this.pending.get(marker.key);
        if (timer !== undefined) clearTimeout(timer);
        this.pending.delete(marker.key);
        // A restart (same resolved configuration, same key) holds the split again; the
        // terminate before it released it, and its linger would otherwise stop it.
        const held = this.held.get(marker.key);
        if (held !== undefined && held.session.live && held.session.stopping === undefined)
          this.services.sessions.hold(held.session, marker.key, held.persist);
        this.services.log.info(`debug session "${session.name}" started with split ${marker.split}`);
      }),
      vscode.debug.onDidTerminateDebugSession((session) => {
        const marker = markerOf(session.configuration);
        if (marker === undefined) return;
        // A child session (js-debug's process targets) may carry its parent's configuration:
        // only the session that launched counts.
        const parent = session.parentSession;
        if (parent !== undefined && markerOf(parent.configuration)?.key === marker.key) return;
        this.services.log.info(`debug session "${session.name}" ended; releasing split ${marker.split}`);
        this.services.sessions.release(marker.key);
      }),
      { dispose: () => this.pending.forEach((t) => clearTimeout(t)) },
    ];
  }

  async resolveDebugConfigurationWithSubstitutedVariables(
    folder: vscode.WorkspaceFolder | undefined,
    configuration: vscode.DebugConfiguration,
    token?: vscode.CancellationToken,
  ): Promise<vscode.DebugConfiguration | null | undefined> {
    if (markerOf(configuration) !== undefined) return configuration;
    const reference = splitReference(configuration);
    if (reference.kind === 'none') return configuration;
    try {
      const parsed =
        reference.kind === 'named'
          ? (await import('../model/launchEdit')).namedSplitBlock(
              reference.name,
              await this.readSplitsFile(folder),
            )
          : this.inlineBlock(folder, configuration, reference.raw);
      return await this.resolve(configuration, parsed, token);
    } catch (err) {
      if (err instanceof LaunchCancelled) return undefined;
      const { message, suggestedAction, actions } = explain(err);
      this.services.notifier.error(
        vscode.l10n.t('Launch "{0}": {1}', configuration.name, message),
        suggestedAction,
        ...actions,
      );
      return undefined; // abort the launch; the error says why
    }
  }

  private async readSplitsFile(folder: vscode.WorkspaceFolder | undefined): Promise<string | undefined> {
    const root = folder ?? vscode.workspace.workspaceFolders?.[0];
    if (root === undefined) return undefined;
    try {
      const bytes = await vscode.workspace.fs.readFile(
        vscode.Uri.joinPath(root.uri, ...SPLITS_FILE_SEGMENTS),
      );
      return new TextDecoder().decode(bytes);
    } catch {
      return undefined;
    }
  }

  /** The old inline block: still honoured, with a one-click migration offered once per launch. */
  private inlineBlock(
    folder: vscode.WorkspaceFolder | undefined,
    configuration: vscode.DebugConfiguration,
    raw: unknown,
  ): LaunchParse {
    const name = String(configuration.name);
    if (!this.toldToMigrate.has(name)) {
      this.toldToMigrate.add(name);
      this.services.notifier.warn(
        vscode.l10n.t(
          'Launch "{0}" uses the old inline queueSplit block, which VS Code flags as "not allowed" in launch.json.',
          name,
        ),
        vscode.l10n.t('Migrate: the launch then names its split in its env, defined in {0}.', SPLITS_FILE),
        {
          title: vscode.l10n.t('Migrate Launch Configurations'),
          run: () => vscode.commands.executeCommand('queueSplit.migrateLaunchConfigs', folder?.uri),
        },
      );
    }
    return parseLaunchBlock(raw);
  }

  private async resolve(
    configuration: vscode.DebugConfiguration,
    parsed: LaunchParse,
    token: vscode.CancellationToken | undefined,
  ): Promise<vscode.DebugConfiguration | null | undefined> {
    const { services } = this;
    if (!parsed.ok) {
      services.notifier.error(
        vscode.l10n.t(
          'Launch "{0}" asks for an invalid split: {1}',
          configuration.name,
          parsed.errors.join(' '),
        ),
        vscode.l10n.t('Fix it in {0} (the schema there shows every setting).', SPLITS_FILE),
      );
      return null; // VS Code opens launch.json
    }
    const block = parsed.block;
    if (block.mode === 'env') {
      // Refused before anything is created: an attach target never sees the split's env.
      const check = mergeSplitEnv(configuration, {});
      if (!check.ok) throw new UserError(check.error, check.fix);
    }
    const api = await services.cluster.api();
    const [workloads, splits] = await Promise.all([api.listWorkloads(), api.listSplits()]);
    const workload = await chooseWorkload(services, workloads, block.workload);
    if (workload === undefined || token?.isCancellationRequested === true) return undefined;
    const declared = workload.queues.map((q) => q.name);
    const queues = block.queues ?? declared;
    const unknown = queues.filter((q) => !declared.includes(q));
    if (unknown.length > 0)
      throw new UserError(
        vscode.l10n.t('{0} declares no queue {1}.', workload.name, unknown.map((q) => `"${q}"`).join(', ')),
        vscode.l10n.t('Use queues it declares: {0}.', declared.join(', ')),
      );
    if (workload.errors.length > 0)
      throw new UserError(
        vscode.l10n.t('{0} cannot be split: {1}', workload.name, workload.errors.join(' | ')),
        vscode.l10n.t('Fix its queue declaration first.'),
      );
    const owner = await services.cluster.owner();
    const defaultFilter = parseFilter(defaultFilterText(owner));
    const filter = block.filter ?? (defaultFilter.ok ? defaultFilter.value : {});
    const request: SplitRequest = {
      target: api.target,
      workload: { kind: workload.kind, name: workload.name },
      queues,
      filter,
      owner,
      mode: block.mode,
      ...(block.mode === 'http' ? { httpTarget: block.httpTarget ?? settings.httpTarget() } : {}),
      ...(block.mode === 'relay' ? { relay: relayFromSettings() } : {}),
    };
    // My own live split of this workload is adopted by ensure(); anybody else's overlap is an error now.
    const check = checkOverlap(filter, {
      workload: request.workload,
      queues,
      splits: splits.filter((s) => s.spec.owner !== owner),
      owner,
    });
    if (check.error !== undefined)
      throw new UserError(check.error, vscode.l10n.t("Change the split's filter in {0}.", SPLITS_FILE));

    if (isCancelled(token)) return undefined;
    // The first split of the workload restarts the team's pods: asked as Start Split… asks, before
    // anything exists, so that Cancel leaves nothing (no split, no sidecar) and starts no debuggee.
    if (!(await confirmRestart(services, splits, request))) {
      services.log.info(
        `launch "${configuration.name}" cancelled at the confirmation that it restarts ${request.workload.kind} ${request.workload.name} in ${request.target.namespace}: nothing was created, no debug session started`,
      );
      return undefined;
    }
    if (isCancelled(token)) return undefined;
    const session = await services.sessions.ensure(request);
    const key = randomUUID();
    services.sessions.hold(session, key, block.persist);
    this.held.set(key, { session, persist: block.persist });
    void session.process.exited.then(() => this.held.delete(key));
    this.pending.set(
      key,
      setTimeout(() => {
        this.pending.delete(key);
        services.log.info(
          `launch "${configuration.name}" did not start a debug session; releasing ${session.name}`,
        );
        services.sessions.release(key);
      }, START_DEADLINE_MS),
    );
    // Cancelled while starting: stop waiting and release the split now, not at the deadline.
    let cancel: (() => void) | undefined;
    const cancelled = new Promise<never>((_, reject) => {
      cancel = () => {
        clearTimeout(this.pending.get(key));
        this.pending.delete(key);
        this.held.delete(key);
        services.log.info(`launch "${configuration.name}" was cancelled; releasing ${session.name}`);
        services.sessions.release(key, { now: true });
        reject(new LaunchCancelled());
      };
    });
    cancelled.catch(() => undefined);
    if (isCancelled(token)) cancel?.();
    const onCancel = token?.onCancellationRequested(() => cancel?.());
    try {
      return await this.deliver(configuration, session, block.mode, key, cancelled);
    } finally {
      onCancel?.dispose();
    }
  }

  private async deliver(
    configuration: vscode.DebugConfiguration,
    session: SplitSession,
    mode: SplitRequest['mode'],
    key: string,
    cancelled: Promise<never>,
  ): Promise<vscode.DebugConfiguration | null | undefined> {
    const { services } = this;
    const resolved: vscode.DebugConfiguration = {
      ...configuration,
      [RESOLVED_MARKER]: { key, split: session.name },
    };

    if (mode !== 'env') {
      // http/relay: the debuggee starts now; the sidecar delivers once the split is Active.
      void services.sessions
        .waitUntilReady(
          session,
          `${vscode.l10n.t('Split for "{0}"', configuration.name)} ${activationNote()}`,
        )
        .then(
          (ready) =>
            services.notifier.info(
              vscode.l10n.t(
                'Split active for "{0}": {1}.',
                configuration.name,
                ready.queues.map((q) => `${q.name} → ${q.deliversTo}`).join(', '),
              ),
            ),
          (err: unknown) => {
            if (session.stopping !== undefined) return;
            const e = explain(err);
            services.notifier.error(
              vscode.l10n.t('Split for "{0}": {1}', configuration.name, e.message),
              e.suggestedAction,
              ...e.actions,
            );
          },
        );
      return resolved;
    }

    // env: the debuggee consumes its session shadow itself, so it needs the env before it starts.
    let ready;
    try {
      ready = await Promise.race([
        services.sessions.waitUntilReady(
          session,
          `${vscode.l10n.t('Starting the split for "{0}"', configuration.name)} ${activationNote()}`,
        ),
        cancelled,
      ]);
    } catch (err) {
      if (err instanceof LaunchCancelled) throw err; // released already
      services.sessions.release(key);
      if (
        session.stopping !== undefined &&
        !(err instanceof SidecarFailure && session.view.error !== undefined)
      )
        return undefined; // cancelled
      throw err;
    }
    const fileText = services.sessions.readEnvFile(ready);
    const env = { ...ready.env, ...(fileText !== undefined ? parseDotenv(fileText) : {}) };
    const merged = mergeSplitEnv(configuration, env);
    if (!merged.ok) throw new UserError(merged.error, merged.fix);
    const { fields, replaced } = merged.merge;
    if (replaced.length > 0)
      services.log.info(
        `launch "${configuration.name}": the split sets ${replaced.join(', ')} (the launch's own values are replaced)`,
      );
    services.log.info(
      `launch "${configuration.name}": merged split env ${Object.keys(env).join(', ')}${ready.secretEnv.length > 0 ? ` (secret: ${ready.secretEnv.join(', ')})` : ''}`,
    );
    return { ...resolved, ...fields };
  }
}
