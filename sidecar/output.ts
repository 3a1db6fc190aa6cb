// Where the sidecar speaks: protocol lines (core/sidecarProtocol.ts) on stdout for the parent, and
// human-readable lines on stderr for a person (or the extension's output channel). Both pass
// through the Redactor, so no code path can print a registered secret.
// A reader that goes away (`| head`, an extension host that died) makes the next write fail with
// EPIPE: that is the parent saying it stopped listening, so the Reporter stops writing to that
// stream and tells its owner once (sidecar/main.ts then detaches) instead of letting the stream's
// 'error' event crash the process (sidecar/README.md, "Exit codes").
import type { Writable } from 'node:stream';
import type { SidecarMessage } from '../core/sidecarProtocol';
import { Redactor } from '../laptop/redact';

/** A message as the caller writes it; the reporter stamps the time. */
export type Outgoing = SidecarMessage extends infer M
  ? M extends SidecarMessage
    ? Omit<M, 'time'>
    : never
  : never;

export class Reporter {
  readonly redactor: Redactor;
  private stdoutOpen = true;
  private stderrOpen = true;
  private onStdoutClosed: ((reason: string) => void) | undefined;
  private stdoutClosedReason: string | undefined;

  constructor(
    private readonly stdout: Writable = process.stdout,
    private readonly stderr: Writable = process.stderr,
    redactor = new Redactor(),
  ) {
    this.redactor = redactor;
    stdout.on('error', (err: NodeJS.ErrnoException) => this.stdoutFailed(err));
    // Nobody is left to tell about a failing stderr: human lines are dropped from then on.
    stderr.on('error', () => {
      this.stderrOpen = false;
    });
  }

  /** Called once when stdout's reader is gone (EPIPE or any other write error). */
  whenStdoutCloses(listener: (reason: string) => void): void {
    this.onStdoutClosed = listener;
    if (this.stdoutClosedReason !== undefined) listener(this.stdoutClosedReason);
  }

  get stdoutIsOpen(): boolean {
    return this.stdoutOpen;
  }

  emit(message: Outgoing): void {
    const line = this.redactor.redactValue({ ...message, time: new Date().toISOString() });
    if (this.stdoutOpen && !this.stdout.destroyed) this.stdout.write(`${JSON.stringify(line)}\n`);
    const human = describe(line as SidecarMessage);
    if (human !== undefined) this.log(human);
  }

  /** A stderr line for people; not part of the protocol. */
  log(text: string): void {
    if (!this.stderrOpen || this.stderr.destroyed) return;
    const stamp = new Date().toISOString().slice(11, 19);
    this.stderr.write(`${stamp} ${this.redactor.redact(text)}\n`);
  }

  private stdoutFailed(err: NodeJS.ErrnoException): void {
    if (!this.stdoutOpen) return;
    this.stdoutOpen = false;
    const reason =
      err.code === 'EPIPE'
        ? 'the reader of stdout went away (EPIPE)'
        : `stdout failed (${err.code ?? err.message})`;
    this.stdoutClosedReason = reason;
    this.log(`${reason}: no more protocol lines; logging here only.`);
    this.onStdoutClosed?.(reason);
  }
}

function describe(m: SidecarMessage): string | undefined {
  switch (m.type) {
    case 'hello':
      return `queue-split-sidecar ${m.version} (pid ${m.pid}, mode ${m.mode})`;
    case 'progress':
      return `${m.stage}${m.queue ? ` [${m.queue}]` : ''}: ${m.message}`;
    case 'warning':
      return `WARNING${m.queue ? ` [${m.queue}]` : ''}: ${m.message}${m.suggestedAction ? `\n  → ${m.suggestedAction}` : ''}`;
    case 'error':
      return `ERROR: ${m.message}\n  → ${m.suggestedAction}`;
    case 'ready':
      return `ready (${m.mode}): ${m.queues.map((q) => `${q.name} ← ${q.shadow} → ${q.deliversTo}`).join('; ')}`;
    case 'delivered':
      return m.attempts > 1
        ? `delivered [${m.queue}] ${m.messageId} after ${m.attempts} attempts`
        : undefined;
    case 'failed':
      return undefined; // the once-per-outage warning says it for people
    case 'status':
    case 'publish-result':
    case 'rejected':
      return undefined; // no stderr line: the protocol line says it
    case 'detached':
      return `detached: ${m.message}`;
  }
}
