// The test kubelet has no container runtime: each image name maps to a local command. Tags
// and digests are ignored. Container `args` are appended; `command` is not supported because
// it would name a path inside an image that does not exist here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot, runDir } from '../../paths';

export interface LocalCommand {
  command: string;
  args: string[];
}

/**
 * The checkout whose build the "images" run. Normally the one that started the kubelet; a second
 * worktree sharing this environment (QS_ENV_DIR) names itself in `<runDir>/pod-root` while its
 * cluster tests run, so they exercise its own build rather than this one's.
 */
function podRoot(): string {
  try {
    const named = fs.readFileSync(path.join(runDir, 'pod-root'), 'utf8').trim();
    if (named && fs.existsSync(path.join(named, 'package.json'))) return named;
  } catch {
    // no override: the kubelet's own checkout
  }
  return repoRoot;
}

const tsx = (script: string) => (): LocalCommand => ({
  command: process.execPath,
  args: ['--import', 'tsx', path.join(podRoot(), script)],
});

const table: Record<string, () => LocalCommand> = {
  // The product's one image: `agent controller` / `agent queue-agent`. The test install names it
  // `queuesplit/agent:test`; the published name (core/image.ts) runs the same build.
  'queuesplit/agent': () => ({ command: process.execPath, args: [path.join(podRoot(), 'dist', 'agent.js')] }),
  'ghcr.io/queuesplit/queue-split-agent': () => ({
    command: process.execPath,
    args: [path.join(podRoot(), 'dist', 'agent.js')],
  }),
  'queuesplit/fixture-kafka-consumer': tsx('test/fixtures/kafkaConsumer.ts'),
  'queuesplit/fixture-rabbitmq-consumer': tsx('test/fixtures/rabbitmqConsumer.ts'),
  // A do-nothing container for pods whose only job is to exist.
  'registry.k8s.io/pause': () => ({ command: 'sleep', args: ['infinity'] }),
};

export const knownImages = Object.keys(table);

export function imageRepository(image: string): string {
  const withoutDigest = image.split('@')[0] ?? image;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon === -1 ? withoutDigest : withoutDigest.slice(0, colon);
}

export function commandFor(image: string, containerArgs: readonly string[] = []): LocalCommand | undefined {
  const entry = table[imageRepository(image)]?.();
  return entry && { command: entry.command, args: [...entry.args, ...containerArgs] };
}
