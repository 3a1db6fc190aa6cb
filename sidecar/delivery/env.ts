// env mode: the debugged process consumes its session shadow itself. It needs the workload's own
// env with two kinds of change: the source env names the session shadow and the group env the
// session group (the controller's status.queues[].envOverrides), and the connection env is the
// one the laptop can use (resolved from ConfigMaps/Secrets, overrides and address map applied).
// The sidecar then only renews the lease and reports.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { QueueSplitQueueStatus } from '../../core/crd/queueSplitSchema';
import { consumerOverrides, envValues } from '../../core/queueConfig/consumerOverrides';
import type { QueueConnection } from '../../laptop/brokerConnection';
import type { Reporter } from '../output';

export interface SessionEnv {
  /** Everything, secrets included: only for the env file. */
  all: Record<string, string>;
  /** Names whose values must not be printed. */
  secret: Set<string>;
}

/** The overrides the controller published, or the same derived from the shadow names. */
export function queueOverrides(
  connection: QueueConnection,
  status: QueueSplitQueueStatus | undefined,
): Record<string, string> {
  if (status?.envOverrides !== undefined && Object.keys(status.envOverrides).length > 0)
    return { ...status.envOverrides };
  return envValues(consumerOverrides(connection.queue, status?.shadow ?? {}));
}

export function sessionEnv(
  connections: readonly QueueConnection[],
  statuses: readonly QueueSplitQueueStatus[],
  reporter: Reporter,
): SessionEnv {
  const all: Record<string, string> = {};
  const secret = new Set<string>();
  const set = (name: string, value: string, isSecret: boolean, queue: string): void => {
    const existing = all[name];
    if (existing !== undefined && existing !== value) {
      reporter.emit({
        type: 'warning',
        code: 'env-conflict',
        queue,
        message: `Queue "${queue}" needs ${name} to be different from what an earlier queue set; keeping the first value.`,
        suggestedAction: 'Split (and debug) these queues one at a time, or give them separate env vars.',
      });
      return;
    }
    all[name] = value;
    if (isSecret) secret.add(name);
  };
  for (const connection of connections) {
    for (const entry of connection.env) set(entry.name, entry.value, entry.secret, connection.queue.name);
  }
  // Session overrides after the connection env: they are what makes the process read its shadow.
  for (const connection of connections) {
    const status = statuses.find((s) => s.name === connection.queue.name);
    for (const [name, value] of Object.entries(queueOverrides(connection, status)))
      set(name, value, false, connection.queue.name);
  }
  return { all, secret };
}

/** dotenv quoting: bare when safe, else single quotes (taken literally), else JSON-style double quotes. */
function quote(value: string): string {
  if (/^[A-Za-z0-9_./:@,+=-]*$/.test(value)) return value;
  if (!/['\n\r]/.test(value)) return `'${value}'`;
  return JSON.stringify(value);
}

const envFiles = new Set<string>();

/**
 * The env file holds credentials and names a session shadow that is gone once the sidecar
 * stops, so it lives exactly as long as the sidecar: it is removed on every exit of the process
 * ('exit' runs on a return from main, on process.exit — every signal path of sidecar/main.ts —
 * and after an uncaught error). Only a SIGKILL leaves it (sidecar/README.md, "env mode").
 */
function removeOnExit(file: string): void {
  if (envFiles.size === 0) {
    process.on('exit', () => {
      for (const f of envFiles) fs.rmSync(f, { force: true });
    });
  }
  envFiles.add(file);
}

/** Writes NAME=value lines, private to the user (it can contain secrets); removed at exit. */
export function writeEnvFile(file: string, env: Readonly<Record<string, string>>): void {
  removeOnExit(file);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const lines = Object.entries(env).map(([name, value]) => `${name}=${quote(value)}`);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(
    tmp,
    `# Written by queue-split-sidecar (env mode). Contains secrets: keep it private.\n${lines.join('\n')}\n`,
    { mode: 0o600 },
  );
  fs.renameSync(tmp, file);
}
