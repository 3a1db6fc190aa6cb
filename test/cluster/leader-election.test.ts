// test-group: serial (times leases on a private API server; a loaded machine would stretch them)
// Leader election when the API server hangs (docs/design.md, "Leader election"): two controller
// replicas run against a private etcd + kube-apiserver (the shared one serves everybody else's
// tests and is never paused), the API server is SIGSTOPped for 10 s — longer than the lease — and
// resumed. The leader must stop acting on its own before the standby can take over, the standby
// must take over once the API answers again, and the new leader must act.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { CoordinationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { installCrd } from '../../deploy/install';
import { repoRoot } from '../env/paths';
import { pollUntil, sleep } from '../support/poll';
import { startPrivateApiServer, type PrivateApiServer } from '../support/privateApiServer';
import { CONTROLLER_LEASE } from '../support/processes';
import { createSplit, waitForSplitPhase } from '../support/splits';

const CONTROLLER_NAMESPACE = 'queuesplit-system';
const TENANT = 'le-tenant';
const LEASE_SECONDS = 6;
// Longer than the lease (6 s), and so than the leader's renew deadline (4 s) with room to spare:
// the leader gives up during the pause, whatever the standby does once the API answers again (it
// takes over a lease after the last change it saw, about 7 s after the resume in practice).
const PAUSE_MS = 10_000;

interface Replica {
  child: ChildProcess;
  identity: string;
  lines: { time: number; event: string; why?: string }[];
  exitedAt?: number;
}

let server: PrivateApiServer | undefined;
let kc: KubeConfig;
const replicas: Replica[] = [];

function startReplica(kubeconfig: string): Replica {
  const child = spawn(
    process.execPath,
    [
      path.join(repoRoot, 'dist', 'agent.js'),
      'controller',
      `--namespace=${CONTROLLER_NAMESPACE}`,
      '--health-port=0',
      '--agent-metrics-port=0',
      `--lease-seconds=${LEASE_SECONDS}`,
      '--resync-ms=300',
    ],
    { env: { ...process.env, KUBECONFIG: kubeconfig }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const replica: Replica = { child, identity: '', lines: [] };
  let buffer = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    for (const line of parts) {
      try {
        const record = JSON.parse(line) as { time: string; event: string; why?: string; identity?: string };
        replica.lines.push({ time: Date.parse(record.time), event: record.event, why: record.why });
        if (record.identity) replica.identity = record.identity;
      } catch {
        replica.lines.push({ time: Date.now(), event: `(not JSON) ${line.slice(0, 200)}` });
      }
    }
  });
  child.once('exit', () => (replica.exitedAt = Date.now()));
  replicas.push(replica);
  return replica;
}

const eventAt = (r: Replica, event: string) => r.lines.find((l) => l.event === event)?.time;
const story = (r: Replica) =>
  r.lines.map((l) => `${new Date(l.time).toISOString()} ${l.event}${l.why ? ` (${l.why})` : ''}`).join('\n');

async function holder(): Promise<string | undefined> {
  const lease = await kc
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ name: CONTROLLER_LEASE, namespace: CONTROLLER_NAMESPACE });
  return lease.spec?.holderIdentity ?? undefined;
}

/** A split of a workload that does not exist: the leader acts on it by rejecting it. */
async function leaderActs(what: string): Promise<void> {
  const split = await createSplit(kc, TENANT, {
    workload: 'absent',
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'le' },
    owner: 'le',
  });
  const rejected = await waitForSplitPhase(kc, TENANT, split.metadata.name!, 'Rejected', 60_000);
  assert.equal(rejected.status?.conditions?.[0]?.reason, 'WorkloadNotFound', what);
}

before(async () => {
  server = await startPrivateApiServer('qs-le');
  kc = server.kc;
  await installCrd(kc);
  const core = kc.makeApiClient(CoreV1Api);
  for (const name of [CONTROLLER_NAMESPACE, TENANT])
    await core.createNamespace({ body: { metadata: { name } } });
});

after(async () => {
  for (const r of replicas) if (r.exitedAt === undefined) r.child.kill('SIGKILL');
  await server?.stop();
});

test('API server paused for 10 s with two controller replicas: the leader stops acting before the standby takes over, which then acts', async () => {
  const first = startReplica(server!.kubeconfig);
  await pollUntil('the first replica leads', async () => eventAt(first, 'leader.acquired'), Boolean, 60_000);
  const second = startReplica(server!.kubeconfig);
  await pollUntil(
    'the second replica waits for leadership',
    async () => eventAt(second, 'controller.waiting_for_leadership'),
    Boolean,
    60_000,
  );
  await leaderActs('the first leader acts');
  assert.equal(await holder(), first.identity);

  server!.pause();
  try {
    await sleep(PAUSE_MS);
  } finally {
    server!.resume();
  }

  // Its log line is read from a pipe: it can arrive after the Lease already names it.
  await pollUntil(
    'the second replica holds the Lease (and has logged so) and the first has exited',
    async () => ({
      holder: await holder(),
      firstExited: first.exitedAt !== undefined,
      logged: eventAt(second, 'leader.acquired') !== undefined,
    }),
    (s) => s.holder === second.identity && s.firstExited && s.logged,
    60_000,
  );
  const takenOver = eventAt(second, 'leader.acquired');
  const context = `first replica:\n${story(first)}\nsecond replica:\n${story(second)}`;
  assert.ok(takenOver !== undefined, `the second replica logged leader.acquired\n${context}`);
  assert.ok(
    first.exitedAt! < takenOver,
    `the first leader stopped acting (exited ${new Date(first.exitedAt!).toISOString()}) before the second began (${new Date(takenOver).toISOString()})\n${context}`,
  );
  assert.ok(
    first.lines.some((l) => l.event === 'leader.lost' && /not renewed within/.test(l.why ?? '')),
    `the first leader gave up because it could not renew, not because another replica took the Lease\n${context}`,
  );
  await leaderActs('the new leader acts');
});
