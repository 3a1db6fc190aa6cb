// The container engine the container backend (./brokers.ts) talks to through testcontainers.
//
// - A Docker-compatible engine the machine already has (Docker Desktop, Docker on Linux, a podman
//   machine's or podman's own socket named by DOCKER_HOST): testcontainers finds it as it always
//   does (DOCKER_HOST, ~/.testcontainers.properties, /var/run/docker.sock) and pulls the official
//   images from Docker Hub.
// - Otherwise, as root on Linux with Debian's podman (the project's own machines: no Docker engine
//   and no image registry), our own podman service: `podman system service` on a socket in the run
//   directory, storage in the user cache (vfs: needs no overlay mounts), the images built offline
//   by ./images/build.sh from the files the process backend uses and tagged with the official
//   names, so testcontainers finds them without pulling.
// QS_CONTAINER_ENGINE=external|podman chooses instead of the detection.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { elasticMqLibs, elasticMqVersion, ensureJars as ensureElasticMqJars } from '../elasticmq';
import { ensureJars as ensureKafkaJars, kafkaLibs, kafkaVersion } from '../kafka';
import { onPath } from '../onPath';
import { cacheDir, runDir } from '../paths';
import { isAlive, logFileOf, runningPid, startDetached, stop, tail } from '../processes';
import { rabbitMqVersion } from './images';

export type EngineKind = 'external' | 'podman';

const podmanDir = path.join(runDir, 'podman');
export const podmanSocket = path.join(podmanDir, 'api.sock');
/** Podman's store: images (large, kept across runs) under the cache; its run state on tmpfs, as
 * podman expects (a reboot empties it, and podman then knows its containers are gone). */
const podmanRoot = path.join(cacheDir, 'podman', 'storage');
const podmanRunRoot = process.env.QS_PODMAN_RUNROOT ?? '/run/queuesplit-podman';
const podmanGlobalArgs = ['--root', podmanRoot, '--runroot', podmanRunRoot, '--storage-driver', 'vfs'];

/** Which engine: QS_CONTAINER_ENGINE, else an engine the machine has, else our podman where it can run. */
export function chooseEngine(): EngineKind {
  const forced = process.env.QS_CONTAINER_ENGINE;
  if (forced !== undefined && forced !== '') {
    if (forced === 'external' || forced === 'podman') return forced;
    throw new Error(
      `QS_CONTAINER_ENGINE must be "external" (Docker Desktop, Docker, a podman socket in DOCKER_HOST) or "podman" (this project's own podman service, Linux as root), got "${forced}"`,
    );
  }
  if (process.env.DOCKER_HOST || fs.existsSync('/var/run/docker.sock')) return 'external';
  if (process.platform === 'linux' && process.getuid?.() === 0 && (onPath('podman') || onPath('apt-get')))
    return 'podman';
  throw new Error(
    'env:up --containers: no container engine. Start Docker Desktop (or `podman machine start` and set ' +
      'DOCKER_HOST to its socket, as `podman machine inspect` prints), or, as root on Debian, let env:up run ' +
      "this project's own podman (QS_CONTAINER_ENGINE=podman).",
  );
}

/** GET on the engine's API through its unix socket; resolves with the status code. */
function ping(socketPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath, path: '/_ping', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

function hardLimit(flag: '-Hn' | '-Hu'): string {
  const out = execFileSync('bash', ['-c', `ulimit ${flag}`], { encoding: 'utf8' }).trim();
  const limit = out === 'unlimited' ? 1048576 : Number(out);
  if (flag === '-Hn') return String(limit);
  // nproc: runc refused (EPERM) every value above the kernel's pid_max here (hard limit 96367,
  // 65536, 96000 refused; 32768 = pid_max accepted), so no more than that.
  const pidMax = Number(fs.readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim());
  return String(Math.min(limit, pidMax > 0 ? pidMax : limit));
}

/**
 * containers.conf for our podman: podman's default container rlimits (nofile 1048576 as root)
 * exceed this kind of VM's hard limits (`ulimit -Hn` 20000 here), and the OCI runtime then
 * refuses to start any container; so the defaults are the limits we have (`hardLimit`). No
 * systemd (cgroupfs, events to a file); runc, the runtime the real test node uses too.
 */
function writeContainersConf(): string {
  const file = path.join(podmanDir, 'containers.conf');
  const nofile = hardLimit('-Hn');
  const nproc = hardLimit('-Hu');
  fs.writeFileSync(
    file,
    [
      '[containers]',
      `default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]`,
      'log_driver = "k8s-file"',
      '[engine]',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      `tmp_dir = "${path.join(podmanRunRoot, 'libpod')}"`,
      'runtime = "runc"',
      '',
    ].join('\n'),
  );
  return file;
}

/**
 * The same limits per container, for our podman: testcontainers names them on every container it
 * creates there rather than relying on the Docker-compatible API to apply containers.conf (without
 * them, Debian's podman 4.3 had runc refuse every container: "error setting rlimit type 6", nproc).
 */
export function podmanUlimits(): Record<string, { soft: number; hard: number }> {
  const nofile = Number(hardLimit('-Hn'));
  const nproc = Number(hardLimit('-Hu'));
  return { nofile: { soft: nofile, hard: nofile }, nproc: { soft: nproc, hard: nproc } };
}

const podmanEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  CONTAINERS_CONF: path.join(podmanDir, 'containers.conf'),
});

/** Debian's podman, buildah and busybox (the images' shell), and what the images are built from. */
function ensurePodmanDeps(): void {
  const script = path.join(__dirname, 'install-deps.sh');
  const run = spawnSync('bash', [script], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0)
    throw new Error(`containers: ${script} failed (exit ${run.status ?? run.signal}); see above.`);
}

/** Starts (or finds running) our podman service; returns its DOCKER_HOST. */
async function ensurePodmanService(): Promise<string> {
  if (podmanSocket.length > 100)
    throw new Error(
      `containers: the podman socket path ${podmanSocket} is too long for a unix socket (over 100 characters); set QS_ENV_DIR to a shorter directory`,
    );
  fs.mkdirSync(podmanDir, { recursive: true });
  fs.mkdirSync(podmanRunRoot, { recursive: true });
  const dockerHost = `unix://${podmanSocket}`;
  if (runningPid('podman') !== undefined && (await ping(podmanSocket).catch(() => 0)) === 200)
    return dockerHost;
  await stop('podman', 5_000);
  fs.rmSync(podmanSocket, { force: true });
  writeContainersConf();
  const proc = startDetached(
    'podman',
    'podman',
    [...podmanGlobalArgs, 'system', 'service', '--time=0', dockerHost],
    { env: podmanEnv() },
  );
  const deadline = Date.now() + 30_000;
  while ((await ping(podmanSocket).catch(() => 0)) !== 200) {
    if (!isAlive(proc.pid) || Date.now() > deadline)
      throw new Error(
        `containers: podman's API service did not answer on ${podmanSocket}.\n--- ${proc.logFile} ---\n${tail(proc.logFile)}`,
      );
    await sleep(200);
  }
  return dockerHost;
}

/** Builds (or finds cached) the brokers' images in our podman's store. */
function buildImages(): void {
  ensureKafkaJars();
  ensureElasticMqJars();
  const started = Date.now();
  const run = spawnSync('bash', [path.join(__dirname, 'images', 'build.sh')], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      ...process.env,
      KAFKA_VERSION: kafkaVersion,
      KAFKA_LIBS: kafkaLibs,
      RABBITMQ_VERSION: rabbitMqVersion,
      ELASTICMQ_VERSION: elasticMqVersion,
      ELASTICMQ_LIBS: elasticMqLibs,
      PODMAN_ROOT: podmanRoot,
      PODMAN_RUNROOT: podmanRunRoot,
    },
  });
  if (run.status !== 0)
    throw new Error(`containers: the broker images did not build (exit ${run.status}); see above.`);
  console.log(`containers: broker images ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}

/**
 * Makes the engine answer and points testcontainers at it (process.env, before testcontainers is
 * first used). Returns which engine it is.
 */
export async function ensureEngine(): Promise<EngineKind> {
  const kind = chooseEngine();
  // Ryuk, testcontainers' reaper, removes a session's containers when the process that started
  // them exits; env:up exits once the brokers are up, and they must stay until env:down (as the
  // process backend's brokers do), so it is off on every engine. Offline its image
  // (testcontainers/ryuk) could not be had anyway: nothing here can pull it.
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  if (kind === 'podman') {
    ensurePodmanDeps();
    process.env.DOCKER_HOST = await ensurePodmanService();
    buildImages();
  }
  return kind;
}

/** Points testcontainers at the engine env:up used (env:down), without starting anything. */
export async function engineIfRunning(): Promise<EngineKind | undefined> {
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  if (runningPid('podman') !== undefined && (await ping(podmanSocket).catch(() => 0)) === 200) {
    process.env.DOCKER_HOST = `unix://${podmanSocket}`;
    return 'podman';
  }
  return undefined;
}

/** Stops our podman service, if env:up started one. */
export async function stopPodmanService(): Promise<boolean> {
  const stopped = await stop('podman', 10_000);
  fs.rmSync(podmanSocket, { force: true });
  return stopped;
}

export const podmanLog = () => logFileOf('podman');
