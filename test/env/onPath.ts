// Whether a command is on this machine's PATH (the environment's scripts choose what they run by it).
import { spawnSync } from 'node:child_process';

export function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}
