// Debug integration for ANY debugger (node, python, go, java, ...): a launch configuration with a
// `queueSplit` block gets its split ensured and a sidecar started before the debugger starts;
// in env mode the split's env (source → session shadow, ...) is merged into the field that
// debugger reads (model/debuggerEnv.ts: `env`, or cppdbg's `environment` list).
// The split stops when the last debug session using it ends, unless the block says persist.
//
// Registered for '*' — VS Code activates us for that through the `onDebug` activation event
// (it fires `onDebugResolve:<type>` only for the concrete type). Guards: a configuration that
// already carries our marker is passed through (double resolution: compounds, restarts, child
// sessions that copy their parent's configuration); concurrent launches of one workload share
// one split (SessionManager.ensure).
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { chooseWorkload } from '../commands/pickers';
import { mergeSplitEnv } from '../model/debuggerEnv';
import { LAUNCH_BLOCK_KEY, parseDotenv, parseLaunchBlock, RESOLVED_MARKER } from '../model/launch';
import { checkFilter, defaultFilterText } from '../model/startSplit';
import type { SplitRequest } from '../model/types';
import { parseFilter } from '../../core/filter';
import { explain, UserError } from '../notifications';
import { relayFromSettings } from '../relay';
import type { Services } from '../services';
import { settings } from '../settings';
import { SidecarFailure } from '../sidecar/sessions';

interface Marker {
  key: string;
  split: string;
}

/** A launch that resolved but whose debug session never started releases its split after this. */
const START_DEADLINE_MS = 120_000;

function markerOf(configuration: vscode.DebugConfiguration): Marker | undefined {
  const value = configuration[RESOLVED_MARKER] as unknown;
  if (typeof value !== 'object' || value === null) return undefined;
  const { key, split } = value as { key?: unknown; split?: unknown };
  return typeof key === 'string' && typeof split === 'string' ? { key, split } : undefined;
}

export class QueueSplitDebugProvider implements vscode.DebugConfigurationProvider {
  private readonly pending = new Map<string, NodeJS.Timeout>();

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
    _folder: vscode.WorkspaceFolder | undefined,
    configuration: vscode.DebugConfiguration,
    token?: vscode.CancellationToken,
  ): Promise<vscode.DebugConfiguration | null | undefined> {
    if (configuration[LAUNCH_BLOCK_KEY] === undefined) return configuration;
    if (markerOf(configuration) !== undefined) return configuration;
    try {
      return await this.resolve(configuration, token);
    } catch (err) {
      const { message, suggestedAction, actions } = explain(err);
      this.services.notifier.error(`Launch "${configuration.name}": ${message}`, suggestedAction, ...actions);
      return undefined; // abort the launch; the error says why
    }
  }

  private async resolve(
    configuration: vscode.DebugConfiguration,
    token: vscode.CancellationToken | undefined,
  ): Promise<vscode.DebugConfiguration | null | undefined> {
    const { services } = this;
    const parsed = parseLaunchBlock(configuration[LAUNCH_BLOCK_KEY]);
    if (!parsed.ok) {
      services.notifier.error(
        `Launch "${configuration.name}" has an invalid queueSplit block: ${parsed.errors.join(' ')}`,
        'Fix the block in launch.json (the snippet "Queue Split block" shows every setting).',
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
        `${workload.name} declares no queue ${unknown.map((q) => `"${q}"`).join(', ')}.`,
        `Use queues it declares: ${declared.join(', ')}.`,
      );
    if (workload.errors.length > 0)
      throw new UserError(
        `${workload.name} cannot be split: ${workload.errors.join(' | ')}`,
        'Fix its queue declaration first.',
      );
    const owner = settings.owner();
    const defaultFilter = parseFilter(defaultFilterText(owner));
    const filter = block.filter ?? (defaultFilter.ok ? defaultFilter.value : {});
    const request: SplitRequest = {
      target: api.target,
      workload: { kind: workload.kind, name: workload.name },
      queues,
      filter: { ...filter },
      owner,
      mode: block.mode,
      ...(block.mode === 'http' ? { httpTarget: block.httpTarget ?? settings.httpTarget() } : {}),
      ...(block.mode === 'relay' ? { relay: relayFromSettings() } : {}),
    };
    // My own live split of this workload is adopted by ensure(); anybody else's overlap is an error now.
    const check = checkFilter(
      Object.entries(filter)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
      { workload: request.workload, queues, splits: splits.filter((s) => s.spec.owner !== owner), owner },
    );
    if (check.error !== undefined)
      throw new UserError(check.error, 'Change queueSplit.headers in launch.json.');

    const session = await services.sessions.ensure(request);
    const key = randomUUID();
    services.sessions.hold(session, key, block.persist);
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
    const resolved: vscode.DebugConfiguration = {
      ...configuration,
      [RESOLVED_MARKER]: { key, split: session.name },
    };

    if (block.mode !== 'env') {
      // http/relay: the debuggee starts now; the sidecar delivers once the split is Active.
      void services.sessions.waitUntilReady(session, `Split for "${configuration.name}"`).then(
        (ready) =>
          services.notifier.info(
            `Split active for "${configuration.name}": ${ready.queues.map((q) => `${q.name} → ${q.deliversTo}`).join(', ')}.`,
          ),
        (err: unknown) => {
          if (session.stopping !== undefined) return;
          const e = explain(err);
          services.notifier.error(`Split for "${configuration.name}": ${e.message}`, e.suggestedAction);
        },
      );
      return resolved;
    }

    // env: the debuggee consumes its session shadow itself, so it needs the env before it starts.
    let ready;
    try {
      ready = await services.sessions.waitUntilReady(
        session,
        `Starting the split for "${configuration.name}"`,
      );
    } catch (err) {
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
