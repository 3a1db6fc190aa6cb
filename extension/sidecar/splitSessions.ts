// The splits this VS Code window runs: for each, the QueueSplit it created (or adopted) and the
// sidecar process serving it. One manager owns them all, so a workload is never split twice at
// once (concurrent starts of the same workload share one attempt), debug sessions can hold a
// split and release it, and everything is detached when the window goes away.
import type { KubeconfigFiles } from '../../core/kubeconfig';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';
import { formatFilter } from '../../core/filter';
import { secretFits, sessionPublicKey } from '../../core/sessionSecret';
import type { ReadyMessage, SidecarMessage } from '../../core/sidecarProtocol';
import { handbackUnfinished } from '../../core/workloadStatus';
import type { BrokerSecrets } from '../brokerSecrets';
import type { ClusterService } from '../cluster';
import type { BlockedRef } from '../model/blocked';
import { filterKeys } from '../model/owner';
import { progressLine } from '../model/phases';
import { inEditorTerms } from '../model/sidecarErrors';
import { rejectedWords, warningWords } from '../model/sidecarWords';
import { myLiveSplit, sameRequest } from '../model/startSplit';
import type { QueueSplit, SplitRequest } from '../model/types';
import { ChangeThrottle } from '../model/changeThrottle';
import { explain, fixAction, type Notifier, UserError } from '../notifications';
import { settings } from '../settings';
import { SplitHolders } from './holders';
import { DETACH_TIMEOUT_SECONDS, SidecarLauncher } from './sidecarLauncher';
import { sessionKey, SplitSession } from './splitSession';
import { specFilter } from '../../core/crd/splitFilter';

/** Where VS Code's secret storage keeps a split's session secret. */
function secretKey(context: string, namespace: string, name: string): string {
  return `queueSplit.session/${sessionKey(context, namespace, name)}`;
}

/**
 * The views redraw a split's session at most this often. A sidecar reports every message it
 * delivers (a `delivered` line, thousands a second under load), and each redraw of the tree, the
 * status bar and the details costs the extension host far more than folding the line; 4 a second
 * still reads as live. Above VS Code's own 200 ms debounce of a tree's changes (ExtHostTreeView),
 * which restarts with every change: a steady stream of faster changes would hold the tree's
 * redraw back until the stream pauses.
 */
export const SESSION_CHANGE_INTERVAL_MS = 250;

/** What changed in this window's splits: the sessionKey()s of the sessions that did. */
export interface SessionsChange {
  readonly keys: ReadonlySet<string>;
}

export interface SessionManagerOptions {
  /** 0: every change is told at once, alone (the behaviour before coalescing; the bench's baseline). */
  coalesceMs?: number;
}

function workloadKey(request: SplitRequest): string {
  return `${request.target.context}/${request.target.namespace}/${request.workload.kind}/${request.workload.name}`;
}

export class SessionManager implements vscode.Disposable {
  private readonly sessions = new Map<string, SplitSession>();
  private readonly starting = new Map<string, Promise<SplitSession>>();
  private readonly changed = new vscode.EventEmitter<SessionsChange>();
  /**
   * A session was created, said something (a sidecar line), lingers or ended: at once after a
   * quiet while, else at most every SESSION_CHANGE_INTERVAL_MS with every session that changed
   * meanwhile. Views subscribe here, never to a SplitSession's own per-line onDidChange.
   */
  readonly onDidChange = this.changed.event;
  private readonly throttle: ChangeThrottle<string>;
  private readonly launcher: SidecarLauncher;
  private readonly holders: SplitHolders;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly cluster: ClusterService,
    private readonly log: vscode.LogOutputChannel,
    private readonly notifier: Notifier,
    brokerSecrets: BrokerSecrets,
    options: SessionManagerOptions = {},
  ) {
    this.throttle = new ChangeThrottle(options.coalesceMs ?? SESSION_CHANGE_INTERVAL_MS, (keys) =>
      this.changed.fire({ keys }),
    );
    this.launcher = new SidecarLauncher(context, log, notifier, brokerSecrets);
    this.holders = new SplitHolders(
      () => this.list(),
      (session) => this.stop(session),
      (session) => this.throttle.add(session.key),
      log,
      notifier,
    );
  }

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
      vscode.l10n.t(
        'You already split {0} in this window (filter {1}, {2} delivery); a workload is split once per developer.',
        session.label,
        formatFilter(specFilter(session.split.spec)) || '(all)',
        session.request.mode,
      ),
      vscode.l10n.t(
        'Stop that split first (Queue Split: Stop Split), or use the same queues, filter and delivery.',
      ),
      [{ title: vscode.l10n.t('Stop Split'), run: () => this.stop(session) }],
    );
  }

  private async start(request: SplitRequest): Promise<SplitSession> {
    // The request's namespace: a tree row's, when the view shows several (model/namespaces.ts).
    const api = await this.cluster.api(request.target.namespace);
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
    // Env values and relay passwords from VS Code's secret storage, for the sidecar's environment.
    const credentials = await this.launcher.credentials(request);
    let split: QueueSplit;
    let sessionSecret: string | undefined;
    if (mine !== undefined) {
      if (!sameRequest(mine, request.queues, request.filter)) {
        throw new UserError(
          vscode.l10n.t(
            'Your split {0} of {1} is still attached with queues {2} and a different filter.',
            mine.metadata.name,
            request.workload.name,
            mine.spec.queues.join(', '),
          ),
          vscode.l10n.t('Stop it first (its messages drain back to the app), then start again.'),
          [
            {
              title: vscode.l10n.t('Stop It'),
              run: () => this.stopByName(mine.metadata.name, mine.metadata.uid, request.target.namespace),
            },
          ],
        );
      }
      if (streams) sessionSecret = await this.secretOf(mine, request);
      this.log.info(`adopting my split ${mine.metadata.name} (${mine.status?.phase ?? 'Pending'})`);
      split = mine;
    } else {
      await this.launcher.preflight(request, api.connection.kubeconfig, credentials);
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
      return this.spawn(request, split, api.connection.kubeconfig, credentials, sessionSecret);
    } catch (err) {
      if (mine === undefined)
        await api.deleteSplit(split.metadata.name, split.metadata.uid).catch(() => undefined);
      throw err;
    }
  }

  /** The session secret of my split created by an earlier window of this VS Code. */
  private async secretOf(split: QueueSplit, request: SplitRequest): Promise<string> {
    const { context, namespace } = request.target;
    const secret = await this.context.secrets.get(secretKey(context, namespace, split.metadata.name));
    if (
      split.spec.session !== undefined &&
      secret !== undefined &&
      secretFits(secret, split.spec.session.publicKey)
    )
      return secret;
    throw new UserError(
      split.spec.session === undefined
        ? vscode.l10n.t(
            'Your split {0} was started for env delivery; its messages cannot be streamed to this window.',
            split.metadata.name,
          )
        : vscode.l10n.t(
            'Your split {0} was started elsewhere (another machine or VS Code); only that one may receive its messages.',
            split.metadata.name,
          ),
      vscode.l10n.t('Stop it (its messages drain back to the app), then start the split again here.'),
      [
        {
          title: vscode.l10n.t('Stop It'),
          run: () => this.stopByName(split.metadata.name, split.metadata.uid, request.target.namespace),
        },
      ],
    );
  }

  /** Starts the sidecar of `split` and follows what it says. */
  private spawn(
    request: SplitRequest,
    split: QueueSplit,
    kubeconfig: KubeconfigFiles | undefined,
    credentials: string | undefined,
    sessionSecret?: string,
  ): SplitSession {
    const { process: child, files } = this.launcher.launch(
      request,
      split,
      kubeconfig,
      credentials,
      sessionSecret,
    );
    const session = new SplitSession(request, split, child, files);
    child.onLog((line) => this.log.info(`[sidecar ${split.metadata.name}] ${line}`));
    child.onMessage((message) => {
      session.apply(message);
      this.onMessage(session, message);
      this.throttle.add(session.key);
    });
    void child.exited.then(({ code, signal }) => {
      const wasStopping = session.stopping !== undefined;
      this.holders.end(session);
      session.exited(code, signal);
      this.log.info(`sidecar of ${split.metadata.name} exited (code ${code}, signal ${signal})`);
      // The settings and env files can hold secrets: gone with the sidecar that needed them.
      for (const file of session.files) fs.rmSync(file, { force: true });
      if (this.sessions.get(session.key) === session) this.sessions.delete(session.key);
      if (!wasStopping && session.view.stage === 'failed' && session.view.error === undefined) {
        this.notifier.error(
          vscode.l10n.t('The sidecar of your split {0} {1}', session.label, session.view.message),
          vscode.l10n.t('Start the split again; your route drains back to the app when its lease runs out.'),
        );
      }
      this.throttle.add(session.key);
    });
    this.sessions.set(session.key, session);
    this.throttle.add(session.key);
    return session;
  }

  private onMessage(session: SplitSession, message: SidecarMessage): void {
    switch (message.type) {
      case 'warning': {
        // The code's words in the user's language (model/sidecarWords.ts); the sidecar's own
        // sentence, its flags turned into settings, follows them and is the detail in the log.
        const words = warningWords(message);
        this.log.warn(
          `${session.label}: the sidecar's warning ${message.code}: ${inEditorTerms(message.message)}${message.suggestedAction !== undefined ? ` ${inEditorTerms(message.suggestedAction)}` : ''}`,
        );
        // The sidecar's sentence follows, marked as its own: it names what (the target, the queue).
        this.notifier.warn(
          `${session.label}: ${words.message} ${vscode.l10n.t('(The sidecar: {0})', inEditorTerms(message.message))}`,
          words.suggestedAction,
          ...this.blockedActions(session, message.code, message.queue),
        );
        break;
      }
      case 'progress':
        this.log.info(`${session.label}: the sidecar's progress (${message.stage}): ${message.message}`);
        break;
      case 'rejected': {
        // The answer to the developer's own reject; automatic ones (--reject-after) are only
        // logged and counted in the tree, or a failing handler would raise one per message.
        const provider = session.view.ready?.queues.find((q) => q.name === message.queue)?.provider;
        this.log.info(`${session.label}: the sidecar's rejected line: ${message.message}`);
        if (message.by === 'request')
          this.notifier.info(`${session.label}: ${rejectedWords(message, provider)}`);
        break;
      }
      case 'detached':
        this.log.info(`${session.label}: the sidecar's detached line: ${message.message}`);
        // The route is gone: so is the use of its secret.
        if (message.drained)
          void this.context.secrets.delete(
            secretKey(session.request.target.context, session.request.target.namespace, session.name),
          );
        break;
      case 'error': {
        // Before `ready` the starter reports it (with its own actions); afterwards it ends the session.
        const shown = session.explainError(message);
        this.log.info(
          `${session.label}: the sidecar's error line: ${message.code}${message.flag !== undefined ? ` (${message.flag})` : ''}: ${shown.detail}`,
        );
        if (session.view.ready !== undefined)
          this.notifier.error(
            `${session.label}: ${shown.message}`,
            shown.suggestedAction,
            ...shown.fixes.map(fixAction),
          );
        else this.log.error(`${session.label}: ${shown.message} → ${shown.suggestedAction}`);
        break;
      }
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
        title: vscode.l10n.t('Retry Now'),
        run: () => vscode.commands.executeCommand('queueSplit.retryBlockedMessage', ref),
      },
      {
        title: vscode.l10n.t('Reject…'),
        run: () => vscode.commands.executeCommand('queueSplit.rejectBlockedMessage', ref),
      },
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
    this.holders.end(session);
    session.stopping ??= (async () => {
      await this.notifier.progress(
        vscode.l10n.t('Stopping your split of {0}', session.label),
        async (report) => {
          report(vscode.l10n.t('stopping delivery, then draining the route back to the app'));
          const listener = session.onDidChange((s) => report(s.view.message));
          try {
            await session.process.stop((DETACH_TIMEOUT_SECONDS + 30) * 1000);
          } finally {
            listener.dispose();
          }
        },
      );
      // Stopped before it attached (a launch cancelled while the sidecar still started): it had
      // nothing to detach, but this window created or adopted the split, so it is deleted here.
      if (session.view.detached === undefined) await this.deleteUnattached(session);
      const detached = session.view.detached;
      // A drained route is not a handed-back workload: say which (sidecar/README.md, "Detaching").
      if (detached?.drained === true && handbackUnfinished(detached.handback))
        this.notifier.warn(
          `${session.label}: ${detached.message}`,
          detached.handback?.nextAction ??
            vscode.l10n.t('Nothing is lost: the controller goes on with the handback.'),
        );
      else if (detached?.drained === true)
        this.notifier.info(vscode.l10n.t('Split stopped: {0}', detached.message));
      else if (detached !== undefined)
        this.notifier.warn(
          `${session.label}: ${detached.message}`,
          vscode.l10n.t('Nothing is lost: the controller finishes the drain.'),
        );
    })();
    return session.stopping;
  }

  private async deleteUnattached(session: SplitSession): Promise<void> {
    try {
      const api = await this.cluster.api(session.request.target.namespace);
      await api.deleteSplit(session.name, session.split.metadata.uid);
      this.log.info(`the sidecar of ${session.name} stopped before it attached: deleted the split`);
    } catch (err) {
      const e = explain(err);
      this.notifier.warn(
        vscode.l10n.t(
          '{0}: could not delete the split after its sidecar stopped: {1}',
          session.label,
          e.message,
        ),
        vscode.l10n.t(
          'Nothing is lost: its lease runs out and the controller drains it; or Stop Split in the Queue Splits view.',
        ),
      );
    }
  }

  /**
   * Stops a split this window has no sidecar for (an earlier window's, a failed start's):
   * deletes it and follows the drain until it is gone.
   */
  async stopByName(name: string, uid?: string, namespace?: string): Promise<void> {
    const api = await this.cluster.api(namespace);
    const session = this.byName(api.target.context, api.target.namespace, name);
    if (session !== undefined && session.live) return this.stop(session);
    await this.notifier.progress(vscode.l10n.t('Stopping split {0}', name), async (report) => {
      await api.deleteSplit(name, uid);
      report(vscode.l10n.t('deleted; the controller drains the route back to the app'));
      const deadline = Date.now() + settings.readyTimeoutSeconds() * 1000;
      for (;;) {
        const current = await api.getSplit(name);
        if (current === undefined || (uid !== undefined && current.metadata.uid !== uid)) return;
        report(progressLine(current));
        if (Date.now() > deadline)
          throw new UserError(
            vscode.l10n.t(
              'Split {0} is still draining after {1}s ({2}).',
              name,
              settings.readyTimeoutSeconds(),
              progressLine(current),
            ),
            vscode.l10n.t(
              'Nothing is lost: the controller finishes the drain. Follow it in the Queue Splits view.',
            ),
          );
        await new Promise((r) => setTimeout(r, 1000));
      }
    });
    this.notifier.info(vscode.l10n.t('Split {0} stopped and drained back to the app.', name));
  }

  /** A debug session starts using `session`: a linger (a restart, the next F5) ends, the split stays. */
  hold(session: SplitSession, holder: string, persist: boolean): void {
    this.holders.hold(session, holder, persist);
  }

  /** A debug session ended: the split lingers after its last holder (./holders.ts). */
  release(holder: string, options: { now?: boolean } = {}): void {
    this.holders.release(holder, options);
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
    this.holders.dispose();
    for (const session of this.sessions.values()) {
      this.holders.end(session);
      session.process.terminate();
    }
    this.throttle.dispose();
    this.changed.dispose();
  }
}
