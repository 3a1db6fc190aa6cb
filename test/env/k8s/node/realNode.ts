// Where the real node (node.sh) keeps what tests read from the host: containerd's socket (to find
// a container's process) and the pod logs it keeps past their pods (./README.md, "Logs").
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { runDir } from '../../paths';

export const realNodeName = process.env.QS_REAL_NODE ?? 'qs-node-1';
const nodeRunOf = (dir: string) => path.join(dir, 'real-node', realNodeName);
export const containerdSocket = path.join(nodeRunOf(runDir), 'containerd', 'containerd.sock');
/** Hard links of every pod log the kubelet wrote: `<ns>_<pod>_<uid>/<container>/<restart>.log`. */
export const keptLogsDirOf = (dir: string) => path.join(nodeRunOf(dir), 'kept-logs');
export const keptLogsDir = keptLogsDirOf(runDir);

const run = promisify(execFile);

/** The host pid of a running containerd task (`containerd://<id>` in a pod's status). */
export async function containerPid(containerId: string): Promise<number | undefined> {
  const id = containerId.replace(/^containerd:\/\//, '');
  const { stdout } = await run('ctr', ['--address', containerdSocket, '-n', 'k8s.io', 'tasks', 'ls']);
  for (const line of stdout.split('\n').slice(1)) {
    const [task, pid, status] = line.trim().split(/\s+/);
    if (task === id && status === 'RUNNING') return Number(pid);
  }
  return undefined;
}

/**
 * The lines a container of a pod wrote, every restart in order (CRI log format: `<time>
 * <stream> <P|F> <text>`, a long line split into partial `P` pieces ending with an `F`).
 */
export function podLogLines(namespace: string, pod: string, container: string): string[] {
  if (!fs.existsSync(keptLogsDir)) return [];
  const dirs = fs.readdirSync(keptLogsDir).filter((d) => d.startsWith(`${namespace}_${pod}_`));
  const lines: string[] = [];
  for (const dir of dirs) {
    const containerDir = path.join(keptLogsDir, dir, container);
    if (!fs.existsSync(containerDir)) continue;
    const files = fs
      .readdirSync(containerDir)
      .filter((f) => /^\d+\.log$/.test(f))
      .sort((a, b) => parseInt(a) - parseInt(b));
    for (const file of files) lines.push(...criLines(fs.readFileSync(path.join(containerDir, file), 'utf8')));
  }
  return lines;
}

function criLines(text: string): string[] {
  const out: string[] = [];
  let partial = '';
  for (const raw of text.split('\n')) {
    const m = /^\S+ (?:stdout|stderr) ([PF]) ?(.*)$/.exec(raw);
    if (!m) continue;
    partial += m[2];
    if (m[1] === 'F') {
      out.push(partial);
      partial = '';
    }
  }
  return out;
}
