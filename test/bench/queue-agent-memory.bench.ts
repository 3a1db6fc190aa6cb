// The queue-agent's memory alone (issue 33 item 4, memory part): part (iv) of
// rabbitmq-routes.bench.ts without its throughput parts, at more route counts and repeated, so
// a change to the bundle, the node flags or what a route holds is measured in minutes. Each run
// starts a real `dist/agent.js queue-agent` process (test/bench/support/queueAgentProcess.ts),
// drives 0 → N routes ACTIVE on one RabbitMQ queue and copies a backlog; route counts interleave
// per round so drift on the shared machine hits them alike.
//
//   npx tsx test/bench/queue-agent-memory.bench.ts [backlog] [runs] [route counts, e.g. 1,100,1000]
//
// QS_BENCH_NODE_FLAGS (space-separated) replaces the node flags the image gives the agent;
// QS_BENCH_NODE runs it on another node binary (the image's Node 24, support/queueAgentProcess.ts).
// Prints a table (medians, MiB) and one JSON line.
import { median } from './stats';
import { benchRun } from './support/benchRun';
import { AGENT_NODE_FLAGS, queueAgentMemory, type AgentMemory } from './support/queueAgentProcess';

const backlog = Number(process.argv[2] ?? 3000);
const runs = Number(process.argv[3] ?? 3);
const counts = (process.argv[4] ?? '1,100,1000').split(',').map(Number);
const flags = process.env.QS_BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? AGENT_NODE_FLAGS;

async function main(): Promise<void> {
  const recorder = benchRun('queue-agent-memory');
  const results = new Map<number, AgentMemory[]>(counts.map((n) => [n, []]));
  for (let i = 0; i < runs; i++)
    for (const n of counts) results.get(n)!.push(await queueAgentMemory(n, backlog, flags));

  const mid = (xs: AgentMemory[], f: (m: AgentMemory) => number | undefined) =>
    Number(median(xs.map(f).filter((x): x is number => x !== undefined)).toFixed(1));
  const nodeVersion = [...results.values()][0]?.[0]?.nodeVersion ?? '?';
  console.log(
    `queue-agent RSS in MiB, medians of ${runs} runs; Node ${nodeVersion}, flags: ${flags.join(' ') || '(none)'}`,
  );
  console.log(
    'routes   started   routes ACTIVE (anon + file)   after backlog   peak   V8 heap used / total (ACTIVE)   runs (ACTIVE)',
  );
  const rows = counts.map((n) => {
    const xs = results.get(n)!;
    const row = {
      routes: n,
      startedMiB: mid(xs, (m) => m.startedMiB),
      activeMiB: mid(xs, (m) => m.activeMiB),
      afterBacklogMiB: mid(xs, (m) => m.afterBacklogMiB),
      peakMiB: mid(xs, (m) => m.peakMiB),
      activeAnonMiB: mid(xs, (m) => m.activeAnonMiB),
      activeFileMiB: mid(xs, (m) => m.activeFileMiB),
      heapUsedMiB: mid(xs, (m) => m.activeHeap?.usedMiB),
      heapTotalMiB: mid(xs, (m) => m.activeHeap?.totalMiB),
      runs: xs,
    };
    console.log(
      `${String(n).padStart(6)}   ${row.startedMiB.toFixed(0).padStart(7)}   ${`${row.activeMiB.toFixed(0)} (${row.activeAnonMiB.toFixed(0)} + ${row.activeFileMiB.toFixed(0)})`.padStart(27)}   ${row.afterBacklogMiB.toFixed(0).padStart(13)}   ${row.peakMiB.toFixed(0).padStart(4)}   ${`${row.heapUsedMiB.toFixed(0)} / ${row.heapTotalMiB.toFixed(0)}`.padStart(29)}   ${xs.map((m) => m.activeMiB.toFixed(0)).join(' ')}`,
    );
    return row;
  });
  recorder.finish({ bench: 'queue-agent-memory', backlog, runs, nodeVersion, nodeFlags: flags, rows });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
