// One split this VS Code window runs: the QueueSplit it created or adopted, the sidecar process
// serving it, what that sidecar has said (folded into a view), the debug sessions holding it,
// and Send Test Message through it.
import * as vscode from 'vscode';
import { randomUUID } from 'node:crypto';
import type {
  BlockedMessageRequest,
  ErrorMessage,
  PublishRequest,
  ReadyMessage,
  SidecarMessage,
} from '../../core/sidecarProtocol';
import { initialSession, isLive, reduceSession, sessionExited, type SessionView } from '../model/sidecarView';
import type { Fix } from '../model/fixes';
import { sidecarError, type EditorError } from '../model/sidecarErrors';
import type { QueueSplit, SplitRequest } from '../model/types';
import type { SidecarProcess } from './process';

export class SidecarFailure extends Error {
  constructor(
    message: string,
    readonly suggestedAction: string,
    /** Its buttons (model/sidecarErrors.ts). */
    readonly fixes: readonly Fix[] = [],
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
        resolve({ published: false, reason: vscode.l10n.t('the sidecar did not answer within 45s') });
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
        resolve({ published: false, reason: vscode.l10n.t('the sidecar is not running') });
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
    if (message.type === 'error') {
      const shown = this.explainError(message);
      this.settle?.reject(new SidecarFailure(shown.message, shown.suggestedAction, shown.fixes));
    }
    this.changed.fire(this);
  }

  /** A sidecar error line in the extension's words, with its buttons. */
  explainError(message: ErrorMessage): EditorError {
    return sidecarError(message, { namespace: this.request.target.namespace, user: this.request.owner });
  }

  exited(code: number | null, signal: string | null): void {
    this.view = sessionExited(this.view, code, signal);
    this.settle?.reject(
      new SidecarFailure(
        this.view.error?.message ?? this.view.message,
        this.view.error?.suggestedAction ??
          vscode.l10n.t('See the Queue Split log (Show Logs) for what the sidecar said.'),
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
