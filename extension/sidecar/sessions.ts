// The splits this VS Code window runs: for each, the QueueSplit it created (or adopted) and the
// sidecar process serving it. One manager owns them all, so a workload is never split twice at
// once (concurrent starts of the same workload share one attempt), debug sessions can hold a
// split and release it, and everything is detached when the window goes away.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { randomBytes, randomUUID } from 'node:crypto';
import { formatFilter } from '../../core/filter';
import { secretFits, sessionPublicKey } from '../../core/sessionSecret';
import {
  SESSION_SECRET_ENV,
  type BlockedMessageRequest,
  type ErrorMessage,
  type PublishRequest,
  type ReadyMessage,
  type SidecarMessage,
} from '../../core/sidecarProtocol';
import type { ClusterService } from '../cluster';
import type { BlockedRef } from '../model/blocked';
import { filterKeys } from '../model/owner';
import { progressLine } from '../model/phases';
import { initialSession, isLive, reduceSession, sessionExited, type SessionView } from '../model/session';
import { preflightArgs, safeFileName, settingsFileContent, sidecarArgs } from '../model/sidecarArgs';
import { myLiveSplit, sameRequest } from '../model/startSplit';
import type { QueueSplit, SplitRequest } from '../model/types';
import { explain, type Notifier, UserError } from '../notifications';
import { settings } from '../settings';
import { SidecarProcess, type SidecarSpawn } from './process';
import { handbackUnfinished } from '../../core/workloadStatus';

/** The sidecar stops delivery, deletes the split and waits this long for the drain. */
const DETACH_TIMEOUT_SECONDS = 120;
/** A preflight's checks are bounded to seconds each (sidecar/preflight.ts); this bounds the process. */
const PREFLIGHT_TIMEOUT_MS = 60_000;
/** While a split lingers, the tree and the status bar count down at this pace. */
const LINGER_TICK_MS = 1_000;

export class SidecarFailure extends Error {
  constructor(
    message: string,
    readonly suggestedAction: string,
  ) {
    super(message);
    this.name = 'SidecarFailure';
  }
}

export class SplitSession {
  view: SessionView;
  /** Debug sessions (by marker key) that use this split. */
  readonly holders = new Set<string>();
  persist = false;
  /** Set while the split lingers after its last debug session (epoch ms it stops at). */
  lingerUntil: number | undefined;
  lingerTimer: NodeJS.Timeout | undefined;
  stopping: Promise<void> | undefined;
  readonly ready: Promise<ReadyMessage>;
  private settle: { resolve: (m: ReadyMessage) => void; reject: (e: Error) => void } | undefined;
  private readonly changed = new vscode.EventEmitter<SplitSession>();
  readonly onDidChange = this.changed.event;
  private readonly publishes = new Map<string, (result: PublishResult) => void>();

  constructor(
    readonly request: SplitRequest,
    readonly split: QueueSplit,
    readonly process: SidecarProcess,
    readonly files: string[],
  ) {
    this.view = initialSession(request.mode);
    this.ready = new Promise<ReadyMessage>((resolve, reject) => (this.settle = { resolve, reject }));
    // Nobody may be awaiting `ready` (a debug launch in http mode does not): never unhandled.
    this.ready.catch(() => undefined);
  }

  get name(): string {
    return this.split.metadata.name;
  }

  get key(): string {
    return sessionKey(this.request.target.context, this.request.target.namespace, this.name);
  }

  get live(): boolean {
    return isLive(this.view);
  }

  get label(): string {
    return `${this.request.workload.name} [${this.request.queues.join(', ')}]`;
  }

  /**
   * Send Test Message through this split's sidecar and its queue-agent (http and relay): the
   * agent publishes it into the real source if it matches the split's filter.
   */
  publish(request: Omit<PublishRequest, 'type' | 'id'>): Promise<PublishResult> {
    const id = randomUUID();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.publishes.delete(id);
        resolve({ published: false, reason: 'the sidecar did not answer within 45s' });
      }, 45_000);
      this.publishes.set(id, (result) => {
        clearTimeout(timer);
        resolve(result);
      });
      if (
        !this.process.request(JSON.stringify({ type: 'publish', id, ...request } satisfies PublishRequest))
      ) {
        clearTimeout(timer);
        this.publishes.delete(id);
        resolve({ published: false, reason: 'the sidecar is not running' });
      }
    });
  }

  /**
   * Asks the sidecar to retry the blocked message now, or to reject it (settled as the app's own
   * reject would); its lines say what came of it. False when the sidecar cannot take requests.
   */
  blockedRequest(type: BlockedMessageRequest['type'], queue: string, messageId: string): boolean {
    return this.process.request(JSON.stringify({ type, queue, messageId } satisfies BlockedMessageRequest));
  }

  apply(message: SidecarMessage): void {
    if (message.type === 'publish-result') {
      this.publishes.get(message.id)?.({
        published: message.published,
        ...(message.reason !== undefined ? { reason: message.reason } : {}),
        ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
      });
      this.publishes.delete(message.id);
      return;
    }
    this.view = reduceSession(this.view, message);
    if (message.type === 'ready') this.settle?.resolve(message);
    if (message.type === 'error')
      this.settle?.reject(new SidecarFailure(message.message, message.suggestedAction));
    this.changed.fire(this);
  }

  exited(code: number | null, signal: string | null): void {
    this.view = sessionExited(this.view, code, signal);
    this.settle?.reject(
      new SidecarFailure(
        this.view.error?.message ?? this.view.message,
        this.view.error?.suggestedAction ?? 'See the Queue Split log (Show Logs) for what the sidecar said.',
      ),
    );
    this.changed.fire(this);
    this.changed.dispose();
  }
}

export interface PublishResult {
  published: boolean;
  messageId?: string;
  reason?: string;
}

export function sessionKey(context: string, namespace: string, name: string): string {
  return `${context}/${namespace}/${name}`;
}

/** Where VS Code's secret storage keeps a split's session secret. */
function secretKey(context: string, namespace: string, name: string): string {
  return `queueSplit.session/${sessionKey(context, namespace, name)}`;
}

function workloadKey(request: SplitRequest): string {
  return `${request.target.context}/${request.target.namespace}/${request.workload.kind}/${request.workload.name}`;
}

export class SessionManager implements vscode.Disposable {
  private readonly sessions = new Map<string, SplitSession>();
  private readonly starting = new Map<string, Promise<SplitSession>>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  /** Runs while any split lingers: the views redraw the time left. */
  private lingerTick: NodeJS.Timeout | undefined;
  /** The last bad `queueSplit.linger` value told about (told once, not on every release). */
  private toldLinger: string | undefined;
  /** The same for `queueSplit.delivery.rejectAfterAttempts`, told when a sidecar starts. */
  private toldRejectAfter: string | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly cluster: ClusterService,
    private readonly log: vscode.LogOutputChannel,
    private readonly notifier: Notifier,
  ) {}

  list(): SplitSession[] {
    return [...this.sessions.values()];
  }

  byName(context: string, namespace: string, name: string): SplitSession | undefined {
    return this.sessions.get(sessionKey(context, namespace, name));
  }

  forWorkload(request: SplitRequest): SplitSession | undefined {
    return this.list().find((s) => s.live && workloadKey(s.request) === workloadKey(request));
  }

  /**
   * Ensures my split of `request.workload` runs with a sidecar: reuses this window's session
   * when it asks for the same thing, adopts my live QueueSplit of an earlier window when it
   * matches, else creates one. Two concurrent calls for one workload share one attempt.
   */
  async ensure(request: SplitRequest): Promise<SplitSession> {
    const key = workloadKey(request);
    const pending = this.starting.get(key);
    if (pending !== undefined) {
      const session = await pending;
      this.checkSame(session, request);
      return session;
    }
    const existing = this.forWorkload(request);
    if (existing !== undefined && existing.stopping === undefined) {
      this.checkSame(existing, request);
      return existing;
    }
    const attempt = (async () => {
      if (existing?.stopping !== undefined) await existing.stopping;
      return this.start(request);
    })();
    this.starting.set(key, attempt);
    try {
      return await attempt;
    } finally {
      this.starting.delete(key);
    }
  }

  private checkSame(session: SplitSession, request: SplitRequest): void {
    if (sameRequest(session.split, request.queues, request.filter) && session.request.mode === request.mode)
      return;
    throw new UserError(
      `You already split ${session.label} in this window (filter ${formatFilter(session.split.spec.filter) || '(all)'}, ${session.request.mode} delivery); a workload is split once per developer.`,
      'Stop that split first (Queue Split: Stop Split), or use the same queues, filter and delivery.',
      [{ title: 'Stop Split', run: () => this.stop(session) }],
    );
  }

  private async start(request: SplitRequest): Promise<SplitSession> {
    const api = await this.cluster.api();
    const mine = myLiveSplit(await api.listSplits(), request.workload, request.owner);
    // http and relay: the queue-agent streams the messages to the sidecar (core/sessionStream.ts).
    const streams = request.mode !== 'env';
    // Every verb the session needs, before anything exists (a refusal creates nothing).
    await (
      await this.cluster.kube()
    ).sessionPreflight(api, request.workload, {
      creates: mine === undefined,
      streams,
    });
    let split: QueueSplit;
    let sessionSecret: string | undefined;
    if (mine !== undefined) {
      if (!sameRequest(mine, request.queues, request.filter)) {
        throw new UserError(
          `Your split ${mine.metadata.name} of ${request.workload.name} is still attached with queues ${mine.spec.queues.join(', ')} and a different filter.`,
          'Stop it first (its messages drain back to the app), then start again.',
          [{ title: 'Stop It', run: () => this.stopByName(mine.metadata.name, mine.metadata.uid) }],
        );
      }
      if (streams) sessionSecret = await this.secretOf(mine);
      this.log.info(`adopting my split ${mine.metadata.name} (${mine.status?.phase ?? 'Pending'})`);
      split = mine;
    } else {
      await this.preflight(request, api.connection.kubeconfigPath);
      const secret = streams ? randomBytes(32).toString('base64url') : undefined;
      split = await api.createSplit(
        request,
        settings.leaseSeconds(),
        secret !== undefined ? sessionPublicKey(secret) : undefined,
      );
      if (secret !== undefined) {
        // Kept in VS Code's secret storage (the OS keychain): a reloaded window adopts the split.
        await this.context.secrets.store(
          secretKey(request.target.context, request.target.namespace, split.metadata.name),
          secret,
        );
        sessionSecret = secret;
      }
      this.log.info(
        `created QueueSplit ${split.metadata.name}: ${request.workload.kind}/${request.workload.name} queues ${request.queues.join(',')} filter ${filterKeys(request.filter)} (${request.mode})`,
      );
    }
    try {
      return this.spawn(request, split, api.connection.kubeconfigPath, sessionSecret);
    } catch (err) {
      if (mine === undefined)
        await api.deleteSplit(split.metadata.name, split.metadata.uid).catch(() => undefined);
      throw err;
    }
  }

  private storageDir(): string {
    const dir = path.join(this.context.globalStorageUri.fsPath, 'sidecar');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** The sidecar's --settings file for `request` (0600; it can hold secrets), if it needs one. */
  private writeSettings(dir: string, base: string, request: SplitRequest): string | undefined {
    const settingsText = settingsFileContent({
      env: settings.envOverrides(),
      addressMap: settings.addressMap(),
      ...(request.relay?.amqpUrl !== undefined ? { relayAmqpUrl: request.relay.amqpUrl } : {}),
      ...(request.relay?.to !== undefined ? { relayTo: request.relay.to } : {}),
    });
    if (settingsText === undefined) return undefined;
    const file = path.join(dir, `${base}.settings.json`);
    fs.writeFileSync(file, settingsText, { mode: 0o600 });
    return file;
  }

  /** How to run dist/sidecar.js: the configured Node, else VS Code's own runtime as Node. */
  private sidecarCommand(args: string[]): SidecarSpawn {
    const configuredNode = settings.sidecarNodePath();
    const node = configuredNode !== '' ? configuredNode : process.execPath;
    const script = this.context.asAbsolutePath(path.join('dist', 'sidecar.js'));
    if (!fs.existsSync(script))
      throw new UserError(
        `The sidecar bundle ${script} is missing.`,
        'Reinstall the extension (or run `npm run build` in a development checkout).',
      );
    return {
      node,
      script,
      args,
      env: configuredNode === '' ? { ELECTRON_RUN_AS_NODE: '1' } : {},
      cwd: path.dirname(script),
    };
  }

  /**
   * What a `relay` or `env` session needs from this machine (the local broker; direct broker
   * reach and login), checked by the sidecar before the split exists: creating it scales down and
   * rolls the team's workload (issue 15 item 5). `http` is not: its target is the process the
   * debug launch starts after the sidecar. A failure creates nothing and says what to change.
   */
  private async preflight(request: SplitRequest, kubeconfigPath: string | undefined): Promise<void> {
    if (request.mode === 'http') return;
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
          ...(kubeconfigPath !== undefined ? { kubeconfig: kubeconfigPath } : {}),
          mode: request.mode,
          ...(request.relay?.kafkaBrokers !== undefined
            ? { relayKafkaBrokers: request.relay.kafkaBrokers }
            : {}),
          ...(settingsFile !== undefined ? { settingsFile } : {}),
        }),
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
      if (error !== undefined) throw new UserError(error.message, error.suggestedAction);
      throw new UserError(
        `The preflight of your ${request.mode} split of ${request.workload.name} ended without a result (exit code ${exit.code}, signal ${exit.signal}). Nothing was created.`,
        'Open the Queue Split output for the sidecar log, then start the split again.',
      );
    } finally {
      if (settingsFile !== undefined) fs.rmSync(settingsFile, { force: true });
    }
  }

  /** The session secret of my split created by an earlier window of this VS Code. */
  private async secretOf(split: QueueSplit): Promise<string> {
    const { context, namespace } = (await this.cluster.api()).target;
    const secret = await this.context.secrets.get(secretKey(context, namespace, split.metadata.name));
    if (
      split.spec.session !== undefined &&
      secret !== undefined &&
      secretFits(secret, split.spec.session.publicKey)
    )
      return secret;
    throw new UserError(
      split.spec.session === undefined
        ? `Your split ${split.metadata.name} was started for env delivery; its messages cannot be streamed to this window.`
        : `Your split ${split.metadata.name} was started elsewhere (another machine or VS Code); only that one may receive its messages.`,
      'Stop it (its messages drain back to the app), then start the split again here.',
      [{ title: 'Stop It', run: () => this.stopByName(split.metadata.name, split.metadata.uid) }],
    );
  }

  private spawn(
    request: SplitRequest,
    split: QueueSplit,
    kubeconfigPath: string | undefined,
    sessionSecret?: string,
  ): SplitSession {
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
      this.notifier.warn(rejectAfter.error, 'Set it to a number of attempts, e.g. 8, or 0.', {
        title: 'Open Settings',
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
      ...(kubeconfigPath !== undefined ? { kubeconfig: kubeconfigPath } : {}),
      mode: request.mode,
      ...(request.httpTarget !== undefined ? { httpTarget: request.httpTarget } : {}),
      ...(request.relay?.kafkaBrokers !== undefined ? { relayKafkaBrokers: request.relay.kafkaBrokers } : {}),
      leaseSeconds: settings.leaseSeconds(),
      readyTimeoutSeconds: settings.readyTimeoutSeconds(),
      detachTimeoutSeconds: DETACH_TIMEOUT_SECONDS,
      rejectAfterAttempts: rejectAfter.attempts,
      stateFile,
      ...(envOut !== undefined ? { envOut } : {}),
      ...(settingsFile !== undefined ? { settingsFile } : {}),
    });
    const command = this.sidecarCommand(args);
    // The secret goes in the child's environment (private to it), never on its command line.
    const spec =
      sessionSecret !== undefined
        ? { ...command, env: { ...command.env, [SESSION_SECRET_ENV]: sessionSecret } }
        : command;
    this.log.info(
      `starting sidecar for ${split.metadata.name}: ${path.basename(spec.node)} ${path.basename(spec.script)} ${args.join(' ')}`,
    );
    const child = new SidecarProcess(spec);
    const session = new SplitSession(request, split, child, files);
    child.onLog((line) => this.log.info(`[sidecar ${split.metadata.name}] ${line}`));
    child.onMessage((message) => {
      session.apply(message);
      this.onMessage(session, message);
      this.changed.fire();
    });
    void child.exited.then(({ code, signal }) => {
      const wasStopping = session.stopping !== undefined;
      this.endLinger(session);
      session.exited(code, signal);
      this.log.info(`sidecar of ${split.metadata.name} exited (code ${code}, signal ${signal})`);
      // The settings and env files can hold secrets: gone with the sidecar that needed them.
      for (const file of session.files) fs.rmSync(file, { force: true });
      if (this.sessions.get(session.key) === session) this.sessions.delete(session.key);
      if (!wasStopping && session.view.stage === 'failed' && session.view.error === undefined) {
        this.notifier.error(
          `The sidecar of your split ${session.label} ${session.view.message}`,
          'Start the split again; your route drains back to the app when its lease runs out.',
        );
      }
      this.changed.fire();
    });
    this.sessions.set(session.key, session);
    this.changed.fire();
    return session;
  }

  private onMessage(session: SplitSession, message: SidecarMessage): void {
    switch (message.type) {
      case 'warning':
        this.notifier.warn(
          `${session.label}: ${message.message}`,
          message.suggestedAction,
          ...this.blockedActions(session, message.code, message.queue),
        );
        break;
      case 'rejected':
        // The answer to the developer's own reject; automatic ones (--reject-after) are only
        // logged and counted in the tree, or a failing handler would raise one per message.
        if (message.by === 'request') this.notifier.info(`${session.label}: ${message.message}`);
        else this.log.info(`${session.label}: ${message.message}`);
        break;
      case 'detached':
        // The route is gone: so is the use of its secret.
        if (message.drained)
          void this.context.secrets.delete(
            secretKey(session.request.target.context, session.request.target.namespace, session.name),
          );
        break;
      case 'error':
        // Before `ready` the starter reports it (with its own actions); afterwards it ends the session.
        if (session.view.ready !== undefined)
          this.notifier.error(`${session.label}: ${message.message}`, message.suggestedAction);
        else this.log.error(`${session.label}: ${message.message} → ${message.suggestedAction}`);
        break;
      default:
        break;
    }
  }

  /**
   * The one notice of an outage of the local target (`target-down`/`relay-down`, once per
   * outage, never per attempt) is also where a message first blocks: it offers the choices.
   */
  private blockedActions(session: SplitSession, code: string, queue: string | undefined) {
    if (code !== 'target-down' && code !== 'relay-down') return [];
    const blocked = session.view.blocked.find((b) => b.queue === queue);
    if (blocked === undefined) return [];
    const ref: BlockedRef = {
      kind: 'blocked',
      split: session.name,
      queue: blocked.queue,
      messageId: blocked.messageId,
    };
    return [
      {
        title: 'Retry Now',
        run: () => vscode.commands.executeCommand('queueSplit.retryBlockedMessage', ref),
      },
      { title: 'Reject…', run: () => vscode.commands.executeCommand('queueSplit.rejectBlockedMessage', ref) },
    ];
  }

  /** Waits for `ready` with a progress notification; cancelling stops the split. */
  async waitUntilReady(session: SplitSession, title: string): Promise<ReadyMessage> {
    return this.notifier.progress(
      title,
      async (report, token) => {
        report(session.view.message);
        const listener = session.onDidChange((s) => report(s.view.message));
        const cancelled = token.onCancellationRequested(() => void this.stop(session));
        try {
          return await session.ready;
        } finally {
          listener.dispose();
          cancelled.dispose();
        }
      },
      { cancellable: true },
    );
  }

  /** Stops one of this window's splits: the sidecar stops delivering, deletes it and waits for the drain. */
  stop(session: SplitSession): Promise<void> {
    this.endLinger(session);
    session.stopping ??= (async () => {
      await this.notifier.progress(`Stopping your split of ${session.label}`, async (report) => {
        report('stopping delivery, then draining the route back to the app');
        const listener = session.onDidChange((s) => report(s.view.message));
        try {
          await session.process.stop((DETACH_TIMEOUT_SECONDS + 30) * 1000);
        } finally {
          listener.dispose();
        }
      });
      // Stopped before it attached (a launch cancelled while the sidecar still started): it had
      // nothing to detach, but this window created or adopted the split, so it is deleted here.
      if (session.view.detached === undefined) await this.deleteUnattached(session);
      const detached = session.view.detached;
      // A drained route is not a handed-back workload: say which (sidecar/README.md, "Detaching").
      if (detached?.drained === true && handbackUnfinished(detached.handback))
        this.notifier.warn(
          `${session.label}: ${detached.message}`,
          detached.handback?.nextAction ?? 'Nothing is lost: the controller goes on with the handback.',
        );
      else if (detached?.drained === true) this.notifier.info(`Split stopped: ${detached.message}`);
      else if (detached !== undefined)
        this.notifier.warn(
          `${session.label}: ${detached.message}`,
          'Nothing is lost: the controller finishes the drain.',
        );
    })();
    return session.stopping;
  }

  private async deleteUnattached(session: SplitSession): Promise<void> {
    try {
      const api = await this.cluster.api();
      await api.deleteSplit(session.name, session.split.metadata.uid);
      this.log.info(`the sidecar of ${session.name} stopped before it attached: deleted the split`);
    } catch (err) {
      const e = explain(err);
      this.notifier.warn(
        `${session.label}: could not delete the split after its sidecar stopped: ${e.message}`,
        'Nothing is lost: its lease runs out and the controller drains it; or Stop Split in the Queue Splits view.',
      );
    }
  }

  /**
   * Stops a split this window has no sidecar for (an earlier window's, a failed start's):
   * deletes it and follows the drain until it is gone.
   */
  async stopByName(name: string, uid?: string): Promise<void> {
    const api = await this.cluster.api();
    const session = this.byName(api.target.context, api.target.namespace, name);
    if (session !== undefined && session.live) return this.stop(session);
    await this.notifier.progress(`Stopping split ${name}`, async (report) => {
      await api.deleteSplit(name, uid);
      report('deleted; the controller drains the route back to the app');
      const deadline = Date.now() + settings.readyTimeoutSeconds() * 1000;
      for (;;) {
        const current = await api.getSplit(name);
        if (current === undefined || (uid !== undefined && current.metadata.uid !== uid)) return;
        report(progressLine(current));
        if (Date.now() > deadline)
          throw new UserError(
            `Split ${name} is still draining after ${settings.readyTimeoutSeconds()}s (${progressLine(current)}).`,
            'Nothing is lost: the controller finishes the drain. Follow it in the Queue Splits view.',
          );
        await new Promise((r) => setTimeout(r, 1000));
      }
    });
    this.notifier.info(`Split ${name} stopped and drained back to the app.`);
  }

  /** A debug session starts using `session`: a linger (a restart, the next F5) ends, the split stays. */
  hold(session: SplitSession, holder: string, persist: boolean): void {
    session.holders.add(holder);
    session.persist ||= persist;
    if (session.lingerUntil !== undefined) {
      this.log.info(`debug session took ${session.name} again: it stops lingering`);
      this.endLinger(session);
      this.changed.fire();
    }
  }

  /**
   * A debug session ended: after its last holder the split lingers `queueSplit.linger` seconds
   * (0: stops now) unless it was meant to persist, so a restart or the next F5 does not roll the
   * workload's pods again. `now`: a cancelled launch, nothing to wait for — stop at once.
   */
  release(holder: string, options: { now?: boolean } = {}): void {
    for (const session of this.sessions.values()) {
      if (!session.holders.delete(holder)) continue;
      if (session.holders.size > 0 || session.persist || !session.live) continue;
      const stopUnheld = () => {
        this.endLinger(session);
        if (session.holders.size > 0 || !session.live || session.stopping !== undefined) return;
        this.log.info(`last debug session of ${session.name} ended: stopping the split`);
        void this.stop(session).catch((err: unknown) => {
          const e = explain(err);
          this.notifier.error(e.message, e.suggestedAction);
        });
      };
      const seconds = options.now === true ? 0 : this.lingerSeconds();
      if (seconds === 0) {
        stopUnheld();
        continue;
      }
      this.endLinger(session);
      session.lingerUntil = Date.now() + seconds * 1000;
      session.lingerTimer = setTimeout(stopUnheld, seconds * 1000);
      this.log.info(`last debug session of ${session.name} ended: the split lingers ${seconds}s`);
      this.lingerTick ??= setInterval(() => {
        if (!this.list().some((s) => s.lingerUntil !== undefined)) {
          clearInterval(this.lingerTick);
          this.lingerTick = undefined;
        }
        this.changed.fire();
      }, LINGER_TICK_MS);
      this.changed.fire();
    }
  }

  private lingerSeconds(): number {
    const linger = settings.linger();
    if (linger.error !== undefined && linger.error !== this.toldLinger) {
      this.toldLinger = linger.error;
      this.notifier.warn(linger.error, 'Set queueSplit.linger to seconds, e.g. 180, or 0.', {
        title: 'Open Settings',
        run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'queueSplit.linger'),
      });
    }
    return linger.seconds;
  }

  private endLinger(session: SplitSession): void {
    clearTimeout(session.lingerTimer);
    session.lingerTimer = undefined;
    session.lingerUntil = undefined;
  }

  /** Reads the env file the sidecar wrote (env mode): the complete env, secrets included. */
  readEnvFile(ready: ReadyMessage): string | undefined {
    if (ready.envFile === undefined) return undefined;
    try {
      return fs.readFileSync(ready.envFile, 'utf8');
    } catch {
      return undefined;
    }
  }

  dispose(): void {
    // VS Code is closing the window: every sidecar gets a stop request and detaches its split itself.
    clearInterval(this.lingerTick);
    for (const session of this.sessions.values()) {
      this.endLinger(session);
      session.process.terminate();
    }
    this.changed.dispose();
  }
}
