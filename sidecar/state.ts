// The route id survives sidecar restarts here, so a restarted (or kill -9'd) sidecar adopts its
// own QueueSplit — and with it its session shadow and committed offsets — instead of creating a
// second route. Written before the QueueSplit is created: a crash in between still adopts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { ROUTE_ID_PATTERN } from '../core/names';
import { SECRET_PATTERN } from '../core/sessionSecret';
import { SidecarError, errorText } from '../laptop/errors';

const stateSchema = z.object({
  version: z.literal(1),
  routeId: z.string().regex(ROUTE_ID_PATTERN),
  splitName: z.string().min(1),
  context: z.string(),
  namespace: z.string().min(1),
  workload: z.object({ kind: z.enum(['Deployment', 'StatefulSet']), name: z.string().min(1) }),
  createdAt: z.string(),
  /** The route's session stream secret (core/sessionStream.ts); the file is private (0600). */
  sessionSecret: z.string().regex(SECRET_PATTERN).optional(),
});

export type RouteState = z.infer<typeof stateSchema>;

/** `$XDG_STATE_HOME/queuesplit` (default `~/.local/state/queuesplit`). */
export function stateDirectory(): string {
  const base = process.env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'queuesplit');
}

/** File-name-safe: contexts are often ARNs or URLs. */
function safe(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100);
}

export function defaultStateFile(
  context: string,
  namespace: string,
  workload: { kind: string; name: string },
): string {
  const kind = workload.kind === 'StatefulSet' ? 'sts-' : '';
  return path.join(
    stateDirectory(),
    `${safe(context)}-${safe(namespace)}-${kind}${safe(workload.name)}.json`,
  );
}

/** The saved route, or undefined when there is none. A damaged file is an error, not a silent new route. */
export function loadState(file: string): RouteState | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined;
    throw new SidecarError(
      'split-conflict',
      `Cannot read the state file ${file}: ${errorText(err)}`,
      'Fix its permissions or pass another --state-file.',
      '--state-file',
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const result = stateSchema.safeParse(parsed);
  if (!result.success) {
    throw new SidecarError(
      'split-conflict',
      `The state file ${file} is damaged, so the sidecar cannot tell which route it owns.`,
      'If no split of yours is running, delete the file and start again; otherwise pass --split <name> to adopt it.',
      '--state-file',
    );
  }
  return result.data;
}

/** Atomic (write + rename) and private: it names your route. */
export function saveState(file: string, state: RouteState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

export function removeState(file: string): void {
  fs.rmSync(file, { force: true });
}
