// The acks and rejects of one session stream, sent in as few frames as the pace allows. Every
// frame crosses the port-forward (this process's loopback relay, the API server, the kubelet's
// streaming server, the agent) at a write and a read apiece, and the agent answers each with a
// `settled` frame: answered one frame per message, a busy split's answers were two of every
// three frames on that path, and the developer's path kept up with less traffic than it carries
// alone (docs/design.md "The developer's path under load").
//
// An answer waits at most `delayMs` for others to join it, and a batch reaching `maxTags` goes at
// once, so the agent's window never waits on a batch (the caller makes it a fraction of the
// window). Waiting delays only the agent's commit and the `delivered` report, never a delivery;
// a stream that drops meanwhile loses the batch like any unsettled answer: those messages come
// again (core/sessionStream.ts), as before.

export interface Answers {
  acks: number[];
  rejects: number[];
}

export interface AnswerBatchOptions {
  delayMs: number;
  maxTags: number;
  /** Sends one batch (never empty); called synchronously from add() or flush() or the timer. */
  send: (answers: Answers) => void;
}

/** How long an answer waits for others by default: a few POSTs' worth on a busy stream. */
export const ANSWER_DELAY_MS = 5;

export class AnswerBatch {
  private acks: number[] = [];
  private rejects: number[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: AnswerBatchOptions) {}

  add(kind: 'ack' | 'reject', tag: number): void {
    (kind === 'ack' ? this.acks : this.rejects).push(tag);
    if (this.acks.length + this.rejects.length >= this.options.maxTags) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.delayMs);
  }

  /** Sends what waits, now. */
  flush(): void {
    this.cancel();
    if (this.acks.length === 0 && this.rejects.length === 0) return;
    const answers = { acks: this.acks, rejects: this.rejects };
    this.acks = [];
    this.rejects = [];
    this.options.send(answers);
  }

  /** Drops the pending timer (the stream is gone: what waits is not sent). */
  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
