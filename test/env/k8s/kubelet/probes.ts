// HTTP liveness and readiness probes as the kubelet runs them (initialDelaySeconds, periodSeconds,
// timeoutSeconds, failureThreshold, successThreshold). Every pod here shares the host's network,
// so pods are told to take any free port (the agent's `--metrics-port=0`); a probe therefore hits
// the port the container's process actually listens on: the declared one when it listens there,
// else its only listening port. Only httpGet is supported; other handlers fail loudly.
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { V1Container, V1Probe } from '@kubernetes/client-node';

export interface ProbeResult {
  ok: boolean;
  /** The kubelet's wording, e.g. `HTTP probe failed with statuscode: 503`. */
  message: string;
}

/** TCP ports in LISTEN state whose socket an fd of `pid` holds (from /proc, IPv4 and IPv6). */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  try {
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      const link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: 'utf8' });
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m?.[1]) inodes.add(m[1]);
    }
  } catch {
    return []; // the process is gone
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT, st 0A is LISTEN, inode is column 10.
      if (cols[3] !== '0A' || !cols[9] || !inodes.has(cols[9])) continue;
      const port = parseInt(cols[1]?.split(':')[1] ?? '', 16);
      if (Number.isInteger(port)) ports.add(port);
    }
  }
  return [...ports].sort((a, b) => a - b);
}

function declaredPort(container: V1Container, port: number | string): number | undefined {
  if (typeof port === 'number') return port;
  const named = container.ports?.find((p) => p.name === port);
  return named?.containerPort ?? (/^\d+$/.test(port) ? Number(port) : undefined);
}

function httpGet(port: number, path: string, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, timeout: timeoutMs }, (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      resolve(
        code >= 200 && code < 400
          ? { ok: true, message: `HTTP probe succeeded with statuscode: ${code}` }
          : { ok: false, message: `HTTP probe failed with statuscode: ${code}` },
      );
    });
    req.on('timeout', () => {
      req.destroy();
      resolve({ ok: false, message: `Get "http://127.0.0.1:${port}${path}": context deadline exceeded` });
    });
    req.on('error', (err) =>
      resolve({ ok: false, message: `Get "http://127.0.0.1:${port}${path}": ${err.message}` }),
    );
  });
}

/** One probe attempt against the container whose main process is `pid`. */
export async function probeOnce(container: V1Container, probe: V1Probe, pid: number): Promise<ProbeResult> {
  const get = probe.httpGet;
  if (!get) {
    return { ok: false, message: 'the test kubelet supports only httpGet probes' };
  }
  const wanted = declaredPort(container, get.port as number | string);
  if (wanted === undefined) return { ok: false, message: `probe port ${String(get.port)} is not declared` };
  const listening = listeningPorts(pid);
  const port = listening.includes(wanted) ? wanted : listening.length === 1 ? listening[0] : undefined;
  if (port === undefined) {
    return {
      ok: false,
      message: `Get "http://127.0.0.1:${wanted}${get.path ?? '/'}": dial tcp 127.0.0.1:${wanted}: connect: connection refused`,
    };
  }
  return httpGet(port, get.path ?? '/', (probe.timeoutSeconds ?? 1) * 1000);
}

export interface ProbeTimers {
  stop(): void;
}

export type ProbeVerdict = 'passed' | 'failed' | 'unchanged';

/**
 * Runs `probe` every periodSeconds after initialDelaySeconds. `onResult` gets each attempt and
 * its verdict: `failed` after failureThreshold failures in a row, `passed` after
 * successThreshold successes, else `unchanged` (the state holds, as in the kubelet).
 */
export function runProbe(
  container: V1Container,
  probe: V1Probe,
  pid: number,
  onResult: (verdict: ProbeVerdict, result: ProbeResult) => void,
): ProbeTimers {
  let stopped = false;
  let failures = 0;
  let successes = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    if (stopped) return;
    const result = await probeOnce(container, probe, pid);
    if (stopped) return;
    failures = result.ok ? 0 : failures + 1;
    successes = result.ok ? successes + 1 : 0;
    const verdict: ProbeVerdict = result.ok
      ? successes >= (probe.successThreshold ?? 1)
        ? 'passed'
        : 'unchanged'
      : failures >= (probe.failureThreshold ?? 3)
        ? 'failed'
        : 'unchanged';
    onResult(verdict, result);
    timer = setTimeout(() => void tick(), (probe.periodSeconds ?? 10) * 1000);
  };
  timer = setTimeout(() => void tick(), (probe.initialDelaySeconds ?? 0) * 1000);
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
