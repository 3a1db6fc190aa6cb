// Runs engine steps one at a time: the controller calls them in sequence, but a retry of a
// step whose caller gave up must not interleave with the next step.
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(op: () => Promise<T>): Promise<T> {
    const next = this.tail.then(op, op);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
