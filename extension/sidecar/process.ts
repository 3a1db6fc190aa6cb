// One sidecar child process (`node dist/sidecar.js --split ...`): stdout is the JSON-lines
// protocol (core/sidecarProtocol.ts), stderr is human text for the log (the sidecar redacts both).
// stop() writes a stop request on its stdin (never a signal: on Windows SIGTERM is a hard kill
// that skips the drain) — the sidecar then stops delivering, deletes the split and reports the
// drain — and kills it only if it outlives its own detach timeout (the lease then drains it).
import { spawn, type ChildProcess } from 'node:child_process';
import { parseSidecarLine, STOP_REQUEST_LINE, type SidecarMessage } from '../../core/sidecarProtocol';

export interface SidecarSpawn {
  node: string;
  script: string;
  args: string[];
  /** Extra environment (e.g. ELECTRON_RUN_AS_NODE=1); the extension host's env is inherited. */
  env: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class SidecarProcess {
  private readonly child: ChildProcess;
  private readonly messageListeners = new Set<(m: SidecarMessage) => void>();
  private readonly logListeners = new Set<(line: string) => void>();
  readonly exited: Promise<Exit>;
  private hasExited = false;

  constructor(spec: SidecarSpawn) {
    this.child = spawn(spec.node, [spec.script, ...spec.args], {
      env: { ...process.env, ...spec.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
      windowsHide: true,
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.hasExited = true;
        resolve({ code, signal });
      });
      this.child.once('error', (err) => {
        this.emitLog(`could not start the sidecar (${spec.node}): ${err.message}`);
        this.hasExited = true;
        resolve({ code: null, signal: null });
      });
    });
    this.lines(this.child.stdout, (line) => {
      const message = parseSidecarLine(line);
      if (message !== undefined) for (const l of this.messageListeners) l(message);
    });
    this.lines(this.child.stderr, (line) => this.emitLog(line));
    // A sidecar that already exited closes its end: writing the stop line then fails with EPIPE,
    // which is no error here (there is nothing left to stop).
    this.child.stdin?.on('error', () => undefined);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.hasExited;
  }

  private lines(stream: NodeJS.ReadableStream | null, each: (line: string) => void): void {
    if (stream === null) return;
    let buffer = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line !== '') each(line);
      }
    });
    stream.on('end', () => {
      if (buffer !== '') each(buffer);
      buffer = '';
    });
  }

  private emitLog(line: string): void {
    for (const l of this.logListeners) l(line);
  }

  onMessage(listener: (m: SidecarMessage) => void): void {
    this.messageListeners.add(listener);
  }

  onLog(listener: (line: string) => void): void {
    this.logListeners.add(listener);
  }

  /** Asks the sidecar to stop (its stdin), the same request on every OS; true if it was written. */
  private requestStop(): boolean {
    const stdin = this.child.stdin;
    if (this.hasExited || stdin === null || stdin.destroyed || !stdin.writable) return false;
    stdin.write(STOP_REQUEST_LINE);
    return true;
  }

  /** Writes one request line (core/sidecarProtocol.ts SidecarRequest); false when the sidecar cannot take it. */
  request(line: string): boolean {
    const stdin = this.child.stdin;
    if (this.hasExited || stdin === null || stdin.destroyed || !stdin.writable) return false;
    stdin.write(line.endsWith('\n') ? line : `${line}\n`);
    return true;
  }

  /** A stop request, then SIGKILL after `graceMs` if it is still running. Resolves on exit. */
  async stop(graceMs: number): Promise<Exit> {
    if (this.hasExited) return this.exited;
    // A sidecar without a writable stdin cannot be asked: SIGTERM drains too (except on Windows).
    if (!this.requestStop()) this.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (!this.hasExited) {
        this.emitLog(
          `the sidecar did not exit within ${Math.round(graceMs / 1000)}s of its stop request; killing it (its lease then drains the split)`,
        );
        this.child.kill('SIGKILL');
      }
    }, graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** At once, without waiting for the drain (VS Code is shutting down): the sidecar detaches itself. */
  terminate(): void {
    if (!this.hasExited && !this.requestStop()) this.child.kill('SIGTERM');
  }
}
