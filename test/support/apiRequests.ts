// What a suite asked of the test API server: its request counters (`apiserver_request_total`) and
// its own CPU (`process_cpu_seconds_total`), read from /metrics with the admin kubeconfig before
// and after, and printed as the requests per verb and resource. The cluster suite is limited by
// the machine's two cores, and the API server is among the busiest processes: this says which
// requests its CPU went to, so a cut can aim at them.
//
//   npx tsx test/support/apiRequests.ts snapshot <file>
//   npx tsx test/support/apiRequests.ts diff <before> <after> [--top N]
import * as fs from 'node:fs';
import * as https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { loadServices } from './services';

type Counters = Record<string, number>;

async function metricsText(): Promise<string> {
  const kc = new KubeConfig();
  kc.loadFromFile(loadServices().kubeconfig);
  const server = new URL(kc.getCurrentCluster()!.server);
  const options: https.RequestOptions = { host: server.hostname, port: server.port, path: '/metrics' };
  await kc.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    https
      .get(options, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(body) : reject(new Error(`/metrics answered ${res.statusCode}`)),
        );
      })
      .on('error', reject);
  });
}

/** Request counts by "VERB resource[/subresource]", and the server's CPU seconds as "cpu". */
export function parseCounters(text: string): Counters {
  const out: Counters = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('process_cpu_seconds_total ')) out.cpu = Number(line.split(' ')[1]);
    const m = /^apiserver_request_total\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const resource = `${labels.resource ?? ''}${labels.subresource ? `/${labels.subresource}` : ''}`;
    const key = `${labels.verb ?? '?'} ${resource || '(none)'}`;
    out[key] = (out[key] ?? 0) + Number(m[2]);
  }
  return out;
}

function diff(before: Counters, after: Counters, top: number, seconds: number): string {
  const rows = Object.keys(after)
    .filter((k) => k !== 'cpu')
    .map((k) => ({ k, n: (after[k] ?? 0) - (before[k] ?? 0) }))
    .filter((r) => r.n > 0)
    .sort((a, b) => b.n - a.n);
  const total = rows.reduce((s, r) => s + r.n, 0);
  const cpu = (after.cpu ?? 0) - (before.cpu ?? 0);
  const lines = [
    `API server: ${total} requests in ${seconds.toFixed(0)} s (${(total / seconds).toFixed(1)}/s), its CPU ${cpu.toFixed(0)} s (${((100 * cpu) / seconds).toFixed(0)}% of a core)`,
    'requests  share  verb resource',
    ...rows
      .slice(0, top)
      .map((r) => `${String(r.n).padStart(8)}  ${((100 * r.n) / total).toFixed(1).padStart(4)}%  ${r.k}`),
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const [command, a, b, ...rest] = process.argv.slice(2);
  if (command === 'snapshot' && a) {
    fs.writeFileSync(a, JSON.stringify({ at: Date.now(), counters: parseCounters(await metricsText()) }));
    return;
  }
  if (command === 'diff' && a && b) {
    const topAt = rest.indexOf('--top');
    const top = topAt >= 0 ? Number(rest[topAt + 1]) : 20;
    const before = JSON.parse(fs.readFileSync(a, 'utf8')) as { at: number; counters: Counters };
    const after = JSON.parse(fs.readFileSync(b, 'utf8')) as { at: number; counters: Counters };
    console.log(diff(before.counters, after.counters, top, (after.at - before.at) / 1000));
    return;
  }
  console.error('usage: apiRequests.ts snapshot <file> | diff <before> <after> [--top N]');
  process.exit(2);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(`apiRequests: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
