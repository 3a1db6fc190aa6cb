// Helpers shared by the scenario bodies: one test's split and the engines it made, engine
// loggers, and waiting for a condition. The delivery contract is in delivery.ts, driving an
// engine's steps in steps.ts.
import type { Engine } from '../../agent/engine/contract';
import { jsonLogger, silentLogger, type Logger } from '../../agent/log';
import { pollUntil } from '../support/poll';
import type { ProviderHarness, Topology } from './harness';

/** Engine logs go to stderr with QS_ENGINE_LOG=1 (debugging a failing scenario). */
export function testLogger(): Logger {
  return process.env.QS_ENGINE_LOG === '1' ? jsonLogger(undefined, 'debug') : silentLogger;
}

/** An engine logger that keeps its events (names, counts and error names: the engine logs no
 * bodies or header values, agent/log.ts), so a test can wait for what the engine tried. */
export function recordingLogger(): { logger: Logger; events: Array<Record<string, unknown>> } {
  const events: Array<Record<string, unknown>> = [];
  const logger = jsonLogger((line) => {
    events.push(JSON.parse(line) as Record<string, unknown>);
    if (process.env.QS_ENGINE_LOG === '1') process.stderr.write(`${line}\n`);
  }, 'debug');
  return { logger, events };
}

export const waitFor = <T>(
  what: string,
  read: () => Promise<T>,
  accept: (v: T) => boolean,
  timeoutMs = 30_000,
) => pollUntil(what, read, accept, timeoutMs);

/** One test's split: a topology, the engines it made (closed at the end), and teardown. */
export async function withSplit(
  h: ProviderHarness,
  body: (t: Topology, engines: { track(e: Engine): Engine }) => Promise<void>,
): Promise<void> {
  const t = await h.topology();
  const made: Engine[] = [];
  try {
    await body(t, {
      track: (e) => {
        made.push(e);
        return e;
      },
    });
  } finally {
    for (const e of made) await e.close().catch(() => undefined);
    await h.dispose(t);
  }
}
