// Where the sidecar speaks: protocol lines (sidecar/protocol.ts) on stdout for the parent, and
// human-readable lines on stderr for a person (or the extension's output channel). Both pass
// through the Redactor, so no code path can print a registered secret.
import type { Writable } from 'node:stream';
import type { SidecarMessage } from './protocol';
import { Redactor } from './redact';

/** A message as the caller writes it; the reporter stamps the time. */
export type Outgoing = SidecarMessage extends infer M
  ? M extends SidecarMessage
    ? Omit<M, 'time'>
    : never
  : never;

export class Reporter {
  readonly redactor: Redactor;

  constructor(
    private readonly stdout: Writable = process.stdout,
    private readonly stderr: Writable = process.stderr,
    redactor = new Redactor(),
  ) {
    this.redactor = redactor;
  }

  emit(message: Outgoing): void {
    const line = this.redactor.redactValue({ ...message, time: new Date().toISOString() });
    this.stdout.write(`${JSON.stringify(line)}\n`);
    const human = describe(line as SidecarMessage);
    if (human !== undefined) this.log(human);
  }

  /** A stderr line for people; not part of the protocol. */
  log(text: string): void {
    const stamp = new Date().toISOString().slice(11, 19);
    this.stderr.write(`${stamp} ${this.redactor.redact(text)}\n`);
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
      return undefined;
    case 'detached':
      return `detached: ${m.message}`;
  }
}
