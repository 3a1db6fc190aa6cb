// Shadow lag for metrics: per-shadow readings summed per destination kind. A shadow the broker
// could not be asked about makes its kind unknown (absent), never zero.
import type { ShadowLag } from './contract';

export async function sumLag(
  read: (shadow: string) => Promise<number | undefined>,
  app: string,
  sessions: readonly string[],
): Promise<ShadowLag> {
  const known = (p: Promise<number | undefined>) => p.catch(() => undefined);
  const [appLag, ...sessionLags] = await Promise.all([app, ...sessions].map((s) => known(read(s))));
  const total = sessionLags.every((n) => n !== undefined)
    ? sessionLags.reduce<number>((sum, n) => sum + (n ?? 0), 0)
    : undefined;
  return {
    ...(appLag !== undefined ? { app: appLag } : {}),
    ...(total !== undefined ? { sessions: total } : {}),
  };
}
