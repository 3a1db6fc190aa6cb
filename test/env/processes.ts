// Starting and stopping the environment's long-running processes. Each one gets its own
// process group and a pid file; stopping only ever signals the groups we recorded, never
// processes found by name.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runDir } from './paths';

export interface ManagedProcess {
  name: string;
  pid: number;
  logFile: string;
}

const pidFile = (name: string) => path.join(runDir, 'pids', `${name}.pid`);
export const logFileOf = (name: string) => path.join(runDir, 'logs', `${name}.log`);

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The recorded pid of a process we started, if it is still running. */
export function runningPid(name: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(pidFile(name), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

export function startDetached(
  name: string,
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): ManagedProcess {
  const logFile = logFileOf(name);
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  fs.mkdirSync(path.dirname(pidFile(name)), { recursive: true });
  const out = fs.openSync(logFile, 'a');
  const child = spawn(command, args, {
    detached: true, // own process group: stop() signals the whole group
    stdio: ['ignore', out, out],
    env: options.env ?? process.env,
    cwd: options.cwd,
  });
  fs.closeSync(out);
  if (child.pid === undefined) throw new Error(`could not start ${name} (${command}): is it installed?`);
  child.unref();
  fs.writeFileSync(pidFile(name), `${child.pid}\n`);
  return { name, pid: child.pid, logFile };
}

/** SIGTERM the recorded process group, wait, then SIGKILL. Returns false if nothing was running. */
export async function stop(name: string, graceMs = 15_000): Promise<boolean> {
  const pid = runningPid(name);
  fs.rmSync(pidFile(name), { force: true });
  if (pid === undefined) return false;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        process.kill(pid, signal);
      } catch {
        /* already gone */
      }
    }
  };
  signalGroup('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && groupAlive(pid)) await sleep(200);
  if (groupAlive(pid)) signalGroup('SIGKILL');
  while (groupAlive(pid)) await sleep(100);
  return true;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function tail(file: string, lines = 40): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return `(no log at ${file})`;
  }
}

export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * Polls `check` until it returns true or the deadline passes. On failure the error carries
 * the last lines of the service's log and what to do, because "timed out" alone helps no one.
 */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  options: { timeoutMs: number; logFile: string; pid?: number; hint: string },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    const died = options.pid !== undefined && !isAlive(options.pid);
    if (died || Date.now() > deadline) {
      throw new Error(
        `${what} ${died ? 'exited before it was ready' : `was not ready within ${options.timeoutMs / 1000}s`}.\n` +
          `--- last lines of ${options.logFile} ---\n${tail(options.logFile)}\n---\n${options.hint}`,
      );
    }
    await sleep(500);
  }
}
