// The real sidecar (`dist/sidecar.js`, as `npm run build` makes it) run as a developer runs it,
// its stdout JSON lines (core/sidecarProtocol.ts) kept with the time each arrived, so the
// split-path bench can time a session from the process start to `ready` and from SIGTERM to exit.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { parseSidecarLine } from '../../../core/sidecarProtocol';
import type { SidecarMessage } from '../../../core/sidecarProtocol';
import { repoRoot } from '../../../fixtures/env/paths';

export interface TimedLine {
  at: number;
  line: SidecarMessage;
}

export class BenchSidecar {
  readonly lines: TimedLine[] = [];
  readonly startedAt = Date.now();
  private readonly child: ChildProcess;
  private readonly stderrTail: string[] = [];
  private readonly exited: Promise<number | null>;

  constructor(args: readonly string[], env: NodeJS.ProcessEnv = process.env) {
    const logFile = process.env.QS_BENCH_SIDECAR_LOG;
    const script = path.join(repoRoot, 'dist', 'sidecar.js');
    if (!fs.existsSync(script)) throw new Error(`${script} is missing: run \`npm run build\` first`);
    // QS_BENCH_SIDECAR_PROFILE=<dir>: each sidecar writes a V8 CPU profile there on exit (to see
    // where the developer's path spends its time; NODE_OPTIONS refuses --cpu-prof).
    const profileDir = process.env.QS_BENCH_SIDECAR_PROFILE;
    const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    this.child = spawn(process.execPath, [...nodeArgs, script, ...args], {
      cwd: repoRoot,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    readline.createInterface({ input: this.child.stdout! }).on('line', (text) => {
      const line = parseSidecarLine(text);
      if (line) this.lines.push({ at: Date.now(), line });
    });
    // Human logs: kept for a failure's message only (the sidecar prints nothing secret, §8).
    readline.createInterface({ input: this.child.stderr! }).on('line', (text) => {
      this.stderrTail.push(text);
      // QS_BENCH_SIDECAR_LOG=<file>: every sidecar's log lines, timestamped, to see where a phase waits.
      if (logFile) fs.appendFileSync(logFile, `${new Date().toISOString()} ${this.child.pid} ${text}\n`);
      if (this.stderrTail.length > 20) this.stderrTail.shift();
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /** The first line of `type` (and accepted by `accept`), with its arrival time. */
  first(type: SidecarMessage['type'], accept: (l: SidecarMessage) => boolean = () => true) {
    return this.lines.find((l) => l.line.type === type && accept(l.line));
  }

  /** Waits for a line of `type`; fails loudly on an `error` line, an exit or the deadline. */
  async until(type: SidecarMessage['type'], timeoutMs: number): Promise<TimedLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.first(type);
      if (hit) return hit;
      const error = this.first('error');
      if (error) throw new Error(`sidecar error: ${JSON.stringify(error.line)}`);
      if (this.child.exitCode !== null)
        throw new Error(`sidecar exited ${this.child.exitCode} before "${type}":\n${this.describe()}`);
      if (Date.now() > deadline)
        throw new Error(`no sidecar "${type}" within ${timeoutMs} ms:\n${this.describe()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** SIGTERM (the developer stops the session); resolves with the exit time and code. */
  async stop(timeoutMs: number): Promise<{ at: number; code: number | null }> {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
    const code = await Promise.race([
      this.exited,
      new Promise<'late'>((r) => setTimeout(() => r('late'), timeoutMs).unref()),
    ]);
    if (code === 'late') {
      this.child.kill('SIGKILL');
      throw new Error(`the sidecar did not exit within ${timeoutMs} ms of SIGTERM:\n${this.describe()}`);
    }
    return { at: Date.now(), code };
  }

  /** For clean-up after a failure: SIGTERM, then SIGKILL if it lingers. */
  async end(): Promise<void> {
    if (this.child.exitCode !== null) return;
    await this.stop(60_000).catch(() => this.child.kill('SIGKILL'));
  }

  private describe(): string {
    const last = this.lines.slice(-5).map((l) => JSON.stringify(l.line));
    return [...last, ...this.stderrTail.slice(-8)].join('\n');
  }
}
