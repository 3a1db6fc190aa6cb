// One pod on the test node: its containers as local processes (each in its own process group
// so termination reaches everything it forked), restarts per restartPolicy with backoff, and
// the pod status a real kubelet would report, with httpGet liveness/readiness probes
// (probes.ts) and the Warning events a kubelet records (pull failures, back-off, failed probes).
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { commandFor, knownImages } from './images';
import { runProbe, type ProbeTimers } from './probes';

interface Termination {
  exitCode: number;
  signal?: string;
  startedAt: Date;
  finishedAt: Date;
}

interface ContainerState {
  name: string;
  image: string;
  proc?: ChildProcess;
  startedAt?: Date;
  ready: boolean;
  restartCount: number;
  last?: Termination;
  waiting?: { reason: string; message: string };
  restartTimer?: NodeJS.Timeout;
  probes: ProbeTimers[];
}

export interface PodRunnerDeps {
  /** The container's resolved environment; throws ContainerConfigError while it can't be built. */
  environment(pod: V1Pod, containerName: string): Promise<Record<string, string>>;
  logsDir: string;
  onChange(): void;
  onPids(): void;
  /** Records a core/v1 Event about the pod, as the kubelet does. */
  event(pod: V1Pod, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

const now = () => new Date();

export class PodRunner {
  private readonly containers: ContainerState[];
  private terminating = false;
  private readonly created = now();

  constructor(
    private pod: V1Pod,
    private readonly deps: PodRunnerDeps,
  ) {
    this.containers = (pod.spec?.containers ?? []).map((c) => ({
      name: c.name,
      image: c.image ?? '',
      ready: false,
      restartCount: 0,
      probes: [],
    }));
  }

  get uid(): string {
    return this.pod.metadata?.uid ?? '';
  }

  get pids(): number[] {
    return this.containers.flatMap((c) => (c.proc?.pid ? [c.proc.pid] : []));
  }

  update(pod: V1Pod): void {
    this.pod = pod;
  }

  startAll(): void {
    for (const c of this.containers) void this.startContainer(c);
  }

  private async startContainer(c: ContainerState): Promise<void> {
    if (this.terminating) return;
    const spec = this.pod.spec?.containers.find((s) => s.name === c.name);
    const local = commandFor(c.image, spec?.args ?? []);
    if (!local) {
      c.waiting = {
        reason: 'ErrImagePull',
        message: `the test kubelet runs only known images (${knownImages.join(', ')}); got ${c.image}`,
      };
      this.deps.event(
        this.pod,
        'Warning',
        'Failed',
        `Failed to pull image "${c.image}": ${c.waiting.message}`,
      );
      this.deps.onChange();
      return;
    }
    let env: Record<string, string>;
    try {
      env = await this.deps.environment(this.pod, c.name);
    } catch (err) {
      c.waiting = { reason: 'CreateContainerConfigError', message: (err as Error).message };
      this.deps.onChange();
      c.restartTimer = setTimeout(() => void this.startContainer(c), 2000);
      return;
    }
    if (this.terminating) return;
    const meta = this.pod.metadata;
    const logFile = path.join(this.deps.logsDir, `${meta?.namespace}_${meta?.name}_${c.name}.log`);
    const out = fs.openSync(logFile, 'a');
    const proc = spawn(local.command, local.args, { env, detached: true, stdio: ['ignore', out, out] });
    fs.closeSync(out);
    c.proc = proc;
    c.startedAt = now();
    c.waiting = undefined;
    c.ready = false;
    this.deps.onPids();
    proc.once('error', (err) => {
      c.waiting = { reason: 'RunContainerError', message: err.message };
      this.deps.onChange();
    });
    proc.once('exit', (code, signal) => this.onExit(c, proc, code, signal));
    if (spec?.readinessProbe && proc.pid) {
      c.probes.push(
        runProbe(spec, spec.readinessProbe, proc.pid, (verdict, result) => {
          if (c.proc !== proc) return;
          if (!result.ok)
            this.deps.event(this.pod, 'Warning', 'Unhealthy', `Readiness probe failed: ${result.message}`);
          if (verdict === 'unchanged' || c.ready === (verdict === 'passed')) return;
          c.ready = verdict === 'passed';
          this.deps.onChange();
        }),
      );
    } else {
      // No readiness probe: ready once the process has stayed up briefly.
      setTimeout(() => {
        if (c.proc === proc && proc.exitCode === null && proc.signalCode === null) {
          c.ready = true;
          this.deps.onChange();
        }
      }, 500);
    }
    if (spec?.livenessProbe && proc.pid) {
      c.probes.push(
        runProbe(spec, spec.livenessProbe, proc.pid, (verdict, result) => {
          if (c.proc !== proc) return;
          if (!result.ok)
            this.deps.event(this.pod, 'Warning', 'Unhealthy', `Liveness probe failed: ${result.message}`);
          if (verdict !== 'failed') return;
          this.deps.event(
            this.pod,
            'Normal',
            'Killing',
            `Container ${c.name} failed liveness probe, will be restarted`,
          );
          // The kubelet stops the container and restarts it per restartPolicy (onExit).
          signalGroup(proc, 'SIGKILL');
        }),
      );
    }
    this.deps.onChange();
  }

  private onExit(
    c: ContainerState,
    proc: ChildProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): void {
    if (c.proc !== proc) return;
    for (const p of c.probes.splice(0)) p.stop();
    c.proc = undefined;
    c.ready = false;
    c.last = {
      exitCode: code ?? 128 + 9,
      signal: signal ?? undefined,
      startedAt: c.startedAt ?? now(),
      finishedAt: now(),
    };
    this.deps.onPids();
    const policy = this.pod.spec?.restartPolicy ?? 'Always';
    const restart =
      !this.terminating && (policy === 'Always' || (policy === 'OnFailure' && c.last.exitCode !== 0));
    if (restart) {
      const delayMs = Math.min(1000 * 2 ** c.restartCount, 20_000);
      c.restartCount++;
      c.waiting = {
        reason: 'CrashLoopBackOff',
        message: `back-off ${delayMs / 1000}s restarting failed container`,
      };
      this.deps.event(
        this.pod,
        'Warning',
        'BackOff',
        `Back-off restarting failed container ${c.name} in pod ${this.pod.metadata?.name}`,
      );
      c.restartTimer = setTimeout(() => void this.startContainer(c), delayMs);
    }
    this.deps.onChange();
  }

  /** SIGTERM every container's process group, wait the grace period, then SIGKILL. */
  async terminate(graceSeconds: number): Promise<void> {
    this.terminating = true;
    for (const c of this.containers) {
      clearTimeout(c.restartTimer);
      for (const p of c.probes.splice(0)) p.stop();
    }
    const running = this.containers.flatMap((c) => (c.proc ? [c.proc] : []));
    const exited = running.map((p) => new Promise<void>((resolve) => p.once('exit', () => resolve())));
    for (const p of running) signalGroup(p, 'SIGTERM');
    const all = Promise.all(exited);
    const timedOut = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((r) => setTimeout(() => r(true), Math.max(graceSeconds, 0) * 1000)),
    ]);
    if (timedOut) {
      for (const p of running) signalGroup(p, 'SIGKILL');
      await all;
    }
    // A forked grandchild may outlive its parent: finish off the whole group.
    for (const p of running) signalGroup(p, 'SIGKILL');
  }

  status(): V1PodStatus {
    const containerStatuses: V1ContainerStatus[] = this.containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: '',
      containerID: c.proc?.pid ? `process://${c.proc.pid}` : undefined,
      ready: c.ready,
      started: c.proc !== undefined,
      restartCount: c.restartCount,
      state: c.proc
        ? { running: { startedAt: c.startedAt } }
        : c.waiting
          ? { waiting: c.waiting }
          : c.last
            ? { terminated: terminated(c.last) }
            : { waiting: { reason: 'ContainerCreating' } },
      // As the kubelet: the previous run's end while running again or waiting to restart.
      lastState: c.last && (c.proc || c.waiting) ? { terminated: terminated(c.last) } : {},
    }));
    const allReady = this.containers.every((c) => c.ready);
    const policy = this.pod.spec?.restartPolicy ?? 'Always';
    const finished = this.containers.every((c) => !c.proc && !c.waiting && c.last);
    const phase = finished
      ? this.containers.every((c) => c.last?.exitCode === 0)
        ? 'Succeeded'
        : 'Failed'
      : this.containers.some((c) => c.proc) || (policy !== 'Never' && this.containers.some((c) => c.last))
        ? 'Running'
        : 'Pending';
    const condition = (type: string, ok: boolean): V1PodCondition => ({
      type,
      status: ok ? 'True' : 'False',
      lastTransitionTime: this.created,
    });
    return {
      phase,
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      podIP: '127.0.0.1',
      podIPs: [{ ip: '127.0.0.1' }],
      startTime: this.created,
      conditions: [
        condition('PodScheduled', true),
        condition('Initialized', true),
        condition('ContainersReady', allReady),
        condition('Ready', allReady),
      ],
      containerStatuses,
    };
  }
}

function terminated(t: Termination) {
  return {
    exitCode: t.exitCode,
    signal: t.signal ? os.constants.signals[t.signal as NodeJS.Signals] : undefined,
    reason: t.exitCode === 0 ? 'Completed' : 'Error',
    startedAt: t.startedAt,
    finishedAt: t.finishedAt,
  };
}

function signalGroup(p: ChildProcess, signal: NodeJS.Signals): void {
  if (!p.pid) return;
  try {
    process.kill(-p.pid, signal);
  } catch {
    /* already gone */
  }
}
