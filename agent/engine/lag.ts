// Shadow lag for metrics and the QueueSplit status: per-shadow readings, per route and summed per
// destination kind. A shadow the broker could not be asked about makes its kind's sum (and its
// route's reading) unknown (absent), never zero.
import type { ShadowLag } from './contract';

/** Readings in flight at once. One request per shadow all at once opened one HTTP connection
 * per shadow to RabbitMQ's management API (fetch's pool has no per-origin limit): at 1,000
 * routes 1,000 sockets, parsers and responses every probe, about 100 MiB of the queue-agent's
 * RSS (test/bench/queue-agent-memory.bench.ts). A few at a time still read 1,000 shadows well
 * within the probe interval. */
export const LAG_READ_CONCURRENCY = 4;

export async function sumLag(
  read: (shadow: string) => Promise<number | undefined>,
  app: string,
  sessions: readonly { readonly routeId: string; readonly shadow: string }[],
): Promise<ShadowLag> {
  const shadows = [app, ...sessions.map((s) => s.shadow)];
  const readings: (number | undefined)[] = new Array(shadows.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < shadows.length; i = next++)
      readings[i] = await read(shadows[i]!).catch(() => undefined);
  };
  await Promise.all(Array.from({ length: Math.min(LAG_READ_CONCURRENCY, shadows.length) }, worker));
  const [appLag, ...sessionLags] = readings;
  const total = sessionLags.every((n) => n !== undefined)
    ? sessionLags.reduce<number>((sum, n) => sum + (n ?? 0), 0)
    : undefined;
  const routes = Object.fromEntries(
    sessions.flatMap((s, i) => (sessionLags[i] !== undefined ? [[s.routeId, sessionLags[i]]] : [])),
  );
  return {
    ...(appLag !== undefined ? { app: appLag } : {}),
    ...(total !== undefined ? { sessions: total } : {}),
    routes,
  };
}
