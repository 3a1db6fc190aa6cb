// Debug sessions hold a split (the timer side of extension/model/linger.ts); after the last one
// ends the split lingers `queueSplit.linger` seconds (unless it is meant to persist), so a
// debug restart or the next F5 does not roll the workload's pods again, then stops.
import * as vscode from 'vscode';
import { explain, type Notifier } from '../notifications';
import { settings } from '../settings';
import type { SplitSession } from './splitSession';

/** While a split lingers, the tree and the status bar count down at this pace. */
const LINGER_TICK_MS = 1_000;

export class SplitHolders implements vscode.Disposable {
  /** Runs while any split lingers: the views redraw the time left. */
  private lingerTick: NodeJS.Timeout | undefined;
  /** The last bad `queueSplit.linger` value told about (told once, not on every release). */
  private toldLinger: string | undefined;

  constructor(
    /** This window's splits. */
    private readonly sessions: () => readonly SplitSession[],
    /** Stops a split (the sidecar detaches it). */
    private readonly stop: (session: SplitSession) => Promise<void>,
    /** The views redraw `session`. */
    private readonly changed: (session: SplitSession) => void,
    private readonly log: vscode.LogOutputChannel,
    private readonly notifier: Notifier,
  ) {}

  /** A debug session starts using `session`: a linger (a restart, the next F5) ends, the split stays. */
  hold(session: SplitSession, holder: string, persist: boolean): void {
    session.holders.add(holder);
    session.persist ||= persist;
    if (session.lingerUntil !== undefined) {
      this.log.info(`debug session took ${session.name} again: it stops lingering`);
      this.end(session);
      this.changed(session);
    }
  }

  /**
   * A debug session ended: after its last holder the split lingers `queueSplit.linger` seconds
   * (0: stops now) unless it was meant to persist, so a restart or the next F5 does not roll the
   * workload's pods again. `now`: a cancelled launch, nothing to wait for — stop at once.
   */
  release(holder: string, options: { now?: boolean } = {}): void {
    for (const session of this.sessions()) {
      if (!session.holders.delete(holder)) continue;
      if (session.holders.size > 0 || session.persist || !session.live) continue;
      const stopUnheld = () => {
        this.end(session);
        this.changed(session);
        if (session.holders.size > 0 || !session.live || session.stopping !== undefined) return;
        this.log.info(`last debug session of ${session.name} ended: stopping the split`);
        void this.stop(session).catch((err: unknown) => {
          const e = explain(err);
          this.notifier.error(e.message, e.suggestedAction, ...e.actions);
        });
      };
      const seconds = options.now === true ? 0 : this.lingerSeconds();
      if (seconds === 0) {
        stopUnheld();
        continue;
      }
      this.end(session);
      session.lingerUntil = Date.now() + seconds * 1000;
      session.lingerTimer = setTimeout(stopUnheld, seconds * 1000);
      this.log.info(`last debug session of ${session.name} ended: the split lingers ${seconds}s`);
      this.lingerTick ??= setInterval(() => {
        const lingering = this.sessions().filter((s) => s.lingerUntil !== undefined);
        if (lingering.length === 0) {
          clearInterval(this.lingerTick);
          this.lingerTick = undefined;
        }
        for (const s of lingering) this.changed(s);
      }, LINGER_TICK_MS);
      this.changed(session);
    }
  }

  private lingerSeconds(): number {
    const linger = settings.linger();
    if (linger.error !== undefined && linger.error !== this.toldLinger) {
      this.toldLinger = linger.error;
      this.notifier.warn(linger.error, vscode.l10n.t('Set queueSplit.linger to seconds, e.g. 180, or 0.'), {
        title: vscode.l10n.t('Open Settings'),
        run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'queueSplit.linger'),
      });
    }
    return linger.seconds;
  }

  /** The split stops lingering (it is held again, stopped, or gone). */
  end(session: SplitSession): void {
    clearTimeout(session.lingerTimer);
    session.lingerTimer = undefined;
    session.lingerUntil = undefined;
  }

  dispose(): void {
    clearInterval(this.lingerTick);
  }
}
