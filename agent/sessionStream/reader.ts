// What the session server asks of a session shadow's reader, whatever the broker.
import type { RouteStream } from './routeStream';

export interface SessionReader {
  /** Connects and starts streaming into `stream`; rejects when the shadow cannot be read.
   * `onFailure` reports a failure after the start (the server then ends the stream). */
  start(stream: RouteStream, onFailure: (err: unknown) => void): Promise<void>;
  /** Stops reading and leaves the session shadow (a drain waits for its consumers to go).
   * What was acked is committed first; the rest stays in the shadow. Idempotent. May come while
   * start() is still under way: it then waits for it and undoes what it did, so no consumer or
   * group member is left behind once it resolves. */
  stop(): Promise<void>;
}
