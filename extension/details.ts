// "Show Split Details" as a webview panel a person reads (model/details.ts builds the view model
// and the HTML): one panel per split, revealed when already open. Each panel follows the cluster
// (it holds the namespace watch while open), this window's sidecar for the split and, every few
// seconds, the split's Kubernetes Events; bursts of changes are coalesced (throttle.ts) into at
// most a few renders a second. Buttons post an action id only; the id must be one the panel
// currently shows, and it runs an existing command.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { retryHint } from '../core/state/operatorRetry';
import type { BlockedRef } from './model/blocked';
import type { DetailsActionId, DetailsInput, DetailsModel, EventsView } from './model/details';
import type { RouteNode } from './model/tree';
import type { QueueSplit, WorkloadInfo } from './model/types';
import type { NamespaceWatch } from './kube';
import { explain } from './notifications';
import type { Services } from './services';
import { Throttle } from './throttle';
import { workloadCandidates } from './workspace';

export const DETAILS_VIEW_TYPE = 'queueSplit.details';

/** At most this many renders a second per panel (sidecar lines can come hundreds a second). */
const RENDER_INTERVAL_MS = 300;
/** Events are read again after this long, or at once when the split's phase changes. */
const EVENTS_TTL_MS = 10_000;
/** A refused list is asked again only after this long. */
const EVENTS_REFUSED_TTL_MS = 60_000;
/** While visible the page refreshes its relative times (and events) this often; each second while lingering. */
const TICK_MS = 10_000;

export interface DetailsRef {
  context: string;
  namespace: string;
  name: string;
}

const keyOf = (ref: DetailsRef) => `${ref.context}/${ref.namespace}/${ref.name}`;

export class DetailsPanels implements vscode.Disposable {
  private readonly panels = new Map<string, DetailsPanel>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly services: Omit<Services, 'details'>) {
    const { sessions, cluster } = services;
    this.subscriptions.push(
      // When the session manager gets its coalesced change event, subscribe to that one here.
      sessions.onDidChange(() => this.scheduleAll()),
      cluster.onDidChangeTarget(() => this.forEach((p) => void p.follow())),
      cluster.onDidChangeOwner(() => this.scheduleAll()),
    );
  }

  private forEach(run: (panel: DetailsPanel) => void): void {
    for (const panel of this.panels.values()) run(panel);
  }

  private scheduleAll(): void {
    this.forEach((p) => p.schedule());
  }

  /** Opens the details of a split, or reveals them when already open. */
  show(ref: DetailsRef): void {
    const key = keyOf(ref);
    const open = this.panels.get(key);
    if (open !== undefined) {
      open.reveal();
      return;
    }
    const panel = new DetailsPanel(this.services, ref, () => this.panels.delete(key));
    this.panels.set(key, panel);
  }

  /** For tests: what the open panel of `name` shows (its latest view model). */
  modelOf(name: string): DetailsModel | undefined {
    return [...this.panels.values()].find((p) => p.ref.name === name)?.model;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    for (const panel of [...this.panels.values()]) panel.dispose();
    this.panels.clear();
  }
}

interface EventsCache {
  key: string;
  at: number;
  view: EventsView;
}

class DetailsPanel {
  private readonly panel: vscode.WebviewPanel;
  private readonly throttle: Throttle;
  private readonly subscriptions: vscode.Disposable[] = [];
  private hold: { watch: NamespaceWatch; release: () => void } | undefined;
  private watchListener: { dispose(): void } | undefined;
  /** False while another context or namespace is selected: the view keeps its last state. */
  private following = true;
  private followGeneration = 0;
  private lastSplit: QueueSplit | undefined;
  private events: EventsCache | undefined;
  private eventsInFlight: Promise<EventsView> | undefined;
  private manifest: { path: string; uri: vscode.Uri } | undefined;
  private tick: NodeJS.Timeout | undefined;
  private tickMs = 0;
  private lastBody = '';
  private disposed = false;
  model: DetailsModel | undefined;

  constructor(
    private readonly services: Omit<Services, 'details'>,
    readonly ref: DetailsRef,
    private readonly onDisposed: () => void,
  ) {
    const media = vscode.Uri.joinPath(services.context.extensionUri, 'media');
    this.panel = vscode.window.createWebviewPanel(
      DETAILS_VIEW_TYPE,
      `Split ${ref.name}`,
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
      { enableScripts: true, enableCommandUris: false, localResourceRoots: [media] },
    );
    this.panel.iconPath = vscode.Uri.joinPath(media, 'queue-split.svg');
    this.throttle = new Throttle(
      () => this.render(),
      RENDER_INTERVAL_MS,
      (err) => services.log.warn(`split details of ${ref.name}: ${explain(err).message}`),
    );
    this.subscriptions.push(
      this.panel.onDidDispose(() => this.dispose()),
      this.panel.onDidChangeViewState(() => {
        this.retick();
        if (this.panel.visible) this.schedule();
      }),
      this.panel.webview.onDidReceiveMessage((message: unknown) => this.onMessage(message)),
    );
    void this.findManifest();
    void this.follow();
  }

  reveal(): void {
    this.panel.reveal(undefined, false);
    this.schedule();
  }

  schedule(): void {
    this.throttle.schedule();
  }

  /** Holds the namespace watch while the selected context and namespace are this split's. */
  async follow(): Promise<void> {
    const generation = ++this.followGeneration;
    this.releaseWatch();
    const target = await this.services.cluster.target();
    if (this.disposed || generation !== this.followGeneration) return;
    // Any namespace of the selected context is followed (the view may show several: model/namespaces.ts).
    this.following = target?.context === this.ref.context;
    if (this.following) {
      try {
        const hold = await this.services.cluster.holdWatch(this.ref.namespace);
        if (this.disposed || generation !== this.followGeneration) {
          hold.release();
          return;
        }
        this.hold = hold;
        this.watchListener = hold.watch.onChange(() => this.schedule());
      } catch (err) {
        this.services.log.warn(`split details of ${this.ref.name}: no live watch (${explain(err).message})`);
      }
    }
    this.schedule();
  }

  private releaseWatch(): void {
    this.watchListener?.dispose();
    this.watchListener = undefined;
    this.hold?.release();
    this.hold = undefined;
  }

  private async findManifest(): Promise<void> {
    try {
      const candidates = await workloadCandidates(this.services.log);
      const workload = await this.workloadRef();
      if (workload === undefined) return;
      const declared = candidates.find(
        (c) =>
          c.strength === 1 && c.name === workload.name && (c.kind === undefined || c.kind === workload.kind),
      );
      if (declared === undefined) return;
      const uri = await resolveWorkspacePath(declared.from);
      if (uri === undefined) return;
      this.manifest = { path: declared.from, uri };
      this.schedule();
    } catch (err) {
      this.services.log.debug(`split details: no workload manifest found (${explain(err).message})`);
    }
  }

  /** The split's workload, waiting briefly for the first read. */
  private async workloadRef(): Promise<QueueSplit['spec']['workload'] | undefined> {
    for (let i = 0; i < 40 && this.lastSplit === undefined && !this.disposed; i++)
      await new Promise((r) => setTimeout(r, 250));
    return this.lastSplit?.spec.workload;
  }

  private async render(): Promise<void> {
    // A hidden panel renders when shown again (its page then says `ready`).
    if (this.disposed || (!this.panel.visible && this.model !== undefined)) return;
    const input = await this.gather();
    if (this.disposed) return;
    const { detailsModel, renderDetailsBody, renderDetailsHtml } = await import('./model/details');
    const model = detailsModel(input);
    const first = this.model === undefined;
    this.model = model;
    this.panel.title = model.title;
    const body = renderDetailsBody(model);
    if (first) {
      this.panel.webview.html = renderDetailsHtml(model, {
        cspSource: this.panel.webview.cspSource,
        nonce: randomBytes(16).toString('base64'),
        styleUri: this.panel.webview
          .asWebviewUri(vscode.Uri.joinPath(this.services.context.extensionUri, 'media', 'details.css'))
          .toString(),
      });
    } else if (body !== this.lastBody) {
      void this.panel.webview.postMessage({ type: 'render', html: body, title: model.title });
    }
    this.lastBody = body;
    this.retick(input.lingerLeftMs !== undefined);
  }

  private retick(lingering = this.tickMs === 1000): void {
    const wanted = this.disposed || !this.panel.visible ? 0 : lingering ? 1000 : TICK_MS;
    if (wanted === this.tickMs) return;
    if (this.tick !== undefined) clearInterval(this.tick);
    this.tick = wanted > 0 ? setInterval(() => this.schedule(), wanted) : undefined;
    this.tickMs = wanted;
  }

  private async gather(): Promise<DetailsInput> {
    const { cluster, sessions } = this.services;
    const { context, namespace, name } = this.ref;
    const now = Date.now();
    let split: QueueSplit | undefined;
    let readError: string | undefined;
    let workload: WorkloadInfo | undefined;
    let others: QueueSplit[] | undefined;
    const state = this.hold?.watch.current;
    if (!this.following) {
      split = this.lastSplit;
    } else if (state !== undefined && !state.loading) {
      split = state.splits.find((s) => s.metadata.name === name);
      if (state.error !== undefined) {
        readError = state.error.message;
        split ??= this.lastSplit;
      }
    } else {
      try {
        split = await (await cluster.api(namespace)).getSplit(name);
      } catch (err) {
        readError = explain(err).message;
        split = this.lastSplit;
      }
    }
    if (split !== undefined) this.lastSplit = split;
    const ref = split?.spec.workload;
    if (state !== undefined && ref !== undefined) {
      workload = state.workloads.find((w) => w.kind === ref.kind && w.name === ref.name);
      others = state.splits.filter(
        (s) => s.spec.workload.kind === ref.kind && s.spec.workload.name === ref.name,
      );
    }
    const owner =
      cluster.knownOwner ?? (this.following ? await cluster.owner().catch(() => undefined) : undefined);
    const session = sessions.byName(context, namespace, name);
    const mine =
      session !== undefined || (split !== undefined && owner !== undefined && split.spec.owner === owner);
    const events = this.following && split !== undefined ? await this.eventsOf(split) : this.events?.view;
    return {
      name,
      namespace,
      context,
      ...(split !== undefined ? { split } : {}),
      ...(readError !== undefined ? { readError } : {}),
      mine,
      ...(session !== undefined ? { session: session.view } : {}),
      ...(session?.lingerUntil !== undefined ? { lingerLeftMs: session.lingerUntil - now } : {}),
      ...(workload !== undefined ? { workload } : {}),
      ...(others !== undefined ? { others } : {}),
      ...(owner !== undefined ? { owner } : {}),
      events: events ?? (split === undefined ? { state: 'listed', events: [] } : { state: 'loading' }),
      ...(this.manifest !== undefined ? { manifest: this.manifest.path } : {}),
      ...(!this.following
        ? {
            stale: vscode.l10n.t(
              'Not following the cluster: the selected context/namespace is not {0} any more. Select it again to follow this split.',
              `${context}/${namespace}`,
            ),
          }
        : {}),
      now,
    };
  }

  /** The split's and its workload's Events, read again when stale or when the phase changed. */
  private async eventsOf(split: QueueSplit): Promise<EventsView> {
    const key = `${split.metadata.uid ?? ''}/${split.status?.phase ?? ''}/${split.metadata.deletionTimestamp ?? ''}`;
    const cached = this.events;
    const ttl = cached?.view.state === 'unavailable' ? EVENTS_REFUSED_TTL_MS : EVENTS_TTL_MS;
    if (
      cached !== undefined &&
      Date.now() - cached.at < ttl &&
      (cached.key === key || Date.now() - cached.at < 2_000)
    )
      return cached.view;
    this.eventsInFlight ??= (async () => {
      try {
        const { cluster } = this.services;
        const [kube, api] = await Promise.all([cluster.kube(), cluster.api(this.ref.namespace)]);
        return await kube.listEventsOf(api.connection, this.ref.namespace, [
          { kind: 'QueueSplit', name: split.metadata.name },
          { kind: split.spec.workload.kind, name: split.spec.workload.name },
        ]);
      } catch (err) {
        return { state: 'unavailable', reason: explain(err).message } satisfies EventsView;
      } finally {
        this.eventsInFlight = undefined;
      }
    })();
    const view = await this.eventsInFlight;
    this.events = { key, at: Date.now(), view };
    return view;
  }

  private onMessage(message: unknown): void {
    if (typeof message !== 'object' || message === null) return;
    const { type, id } = message as { type?: unknown; id?: unknown };
    if (type === 'ready') {
      this.lastBody = '';
      this.schedule();
      return;
    }
    if (type !== 'action' || typeof id !== 'string') return;
    // Only a button the page shows now: the id is checked against the current model.
    const shown = this.model?.actions.find((a) => a.id === id);
    if (shown === undefined) return;
    void this.run(shown.id).catch((err: unknown) => {
      const { message: text, suggestedAction, actions } = explain(err);
      this.services.notifier.error(text, suggestedAction, ...actions);
    });
  }

  private async run(id: DetailsActionId): Promise<void> {
    const { name } = this.ref;
    const split = this.lastSplit;
    const session = this.services.sessions.byName(this.ref.context, this.ref.namespace, name);
    switch (id) {
      case 'stop':
        await vscode.commands.executeCommand('queueSplit.stopSplit', name);
        return;
      case 'retry':
      case 'reject': {
        const blocked = session?.view.blocked[0];
        const ref: BlockedRef | undefined =
          blocked !== undefined
            ? { kind: 'blocked', split: name, queue: blocked.queue, messageId: blocked.messageId }
            : undefined;
        await vscode.commands.executeCommand(
          id === 'retry' ? 'queueSplit.retryBlockedMessage' : 'queueSplit.rejectBlockedMessage',
          ref,
        );
        return;
      }
      case 'sendTest': {
        const queue = split?.spec.queues.length === 1 ? split.spec.queues[0] : undefined;
        const node: RouteNode | undefined =
          split !== undefined && queue !== undefined
            ? { kind: 'route', id: `details:${name}/${queue}`, split, queue, mine: true }
            : undefined;
        await vscode.commands.executeCommand('queueSplit.sendTestMessage', node);
        return;
      }
      case 'copyRetry': {
        if (split === undefined) return;
        const command = retryHint({ ...split.spec.workload, namespace: this.ref.namespace });
        await vscode.env.clipboard.writeText(command);
        this.services.notifier.info(vscode.l10n.t("Copied the operator's retry command: {0}", command));
        return;
      }
      case 'startSplit':
        await vscode.commands.executeCommand('queueSplit.startSplit');
        return;
      case 'openManifest':
        if (this.manifest !== undefined)
          await vscode.window.showTextDocument(this.manifest.uri, { viewColumn: vscode.ViewColumn.Beside });
        return;
      case 'logs':
        await vscode.commands.executeCommand('queueSplit.showLogs');
        return;
      case 'refresh':
        this.events = undefined;
        this.schedule();
        return;
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.throttle.dispose();
    if (this.tick !== undefined) clearInterval(this.tick);
    this.releaseWatch();
    for (const s of this.subscriptions) s.dispose();
    this.panel.dispose();
    this.onDisposed();
  }
}

/** A workspace-relative path (as asRelativePath gives it, with the folder's name in a multi-root workspace). */
async function resolveWorkspacePath(relative: string): Promise<vscode.Uri | undefined> {
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const tries = [relative];
    const [head, ...rest] = relative.split('/');
    if (head === folder.name && rest.length > 0) tries.push(rest.join('/'));
    for (const path of tries) {
      const uri = vscode.Uri.joinPath(folder.uri, path);
      try {
        await vscode.workspace.fs.stat(uri);
        return uri;
      } catch {
        // not in this folder
      }
    }
  }
  return undefined;
}
