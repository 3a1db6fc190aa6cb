// The bench report (issue 33 item 8): one self-contained HTML page from the benches' JSON
// results (test/bench/support/benchRun.ts), with hand-made inline SVG charts, so it opens from
// disk with no network. Pure: results in, HTML out; test/bench/report/write.ts does the files.
// A bench with no result says "not measured" where it would appear.

/** One bench's JSON result, as the bench wrote it. */
export type BenchJson = { readonly bench: string } & Record<string, unknown>;

/** Every bench `npm run bench` runs, in the order the report lists them. */
export const BENCHES = [
  'rabbitmq-engine',
  'rabbitmq-routes',
  'rabbitmq-header-types',
  'kafka-engine',
  'kafka-codec',
  'kafka-chunk',
  'sqs-engine',
  'session-stream',
  'controller-api',
  'filter-match',
  'ui-redraw',
  'split-path',
] as const;

/** A ratio against the bench's baseline, run in the same process. */
export interface Ratio {
  readonly label: string;
  readonly value: number;
  /** What the ratio is of, e.g. "engine / raw amqplib". */
  readonly against: string;
  /** Whether more is better (throughput) or less (cost, CPU). */
  readonly better: 'higher' | 'lower';
}

const num = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
const routesLabel = (n: unknown) => (n === 1 ? '1 route' : `${(num(n) ?? 0).toLocaleString('en-US')} routes`);
const rowsOf = (r: BenchJson): Record<string, unknown>[] =>
  Array.isArray(r.rows)
    ? (r.rows.filter((x) => typeof x === 'object' && x !== null) as Record<string, unknown>[])
    : [];

/** The ratios a bench reports against its baseline; for a bench not known here, its `ratio`
 * fields (top level and per row). */
export function ratiosOf(r: BenchJson): Ratio[] {
  const out: Ratio[] = [];
  const push = (label: string, value: unknown, against: string, better: Ratio['better'] = 'higher') => {
    const v = num(value);
    if (v !== undefined) out.push({ label, value: v, against, better });
  };
  switch (r.bench) {
    case 'rabbitmq-engine': {
      const rows = rowsOf(r);
      if (rows.length === 0) push('classic', r.ratio, 'engine / raw amqplib');
      for (const row of rows) {
        push(String(row.sourceType), row.ratio, 'engine / raw amqplib');
        push(
          `${String(row.sourceType)}, raw 1 ack/msg`,
          row.rawSingleAckRatio,
          'acking alone / batched acks',
        );
      }
      break;
    }
    case 'rabbitmq-routes':
      for (const row of rowsOf(r)) push(routesLabel(row.routes), row.ratio, 'msg/s vs 1 route');
      break;
    case 'kafka-codec':
      for (const row of rowsOf(r)) push(String(row.source), row.rateVsNone, 'msg/s vs uncompressed');
      break;
    case 'kafka-chunk':
      for (const row of rowsOf(r))
        push(`chunk ${String(row.chunk)}`, row.ratio, `msg/s vs chunk ${String(r.baseline)}`);
      break;
    case 'session-stream':
      push('stream', r.ratio, 'rec/s vs direct');
      break;
    case 'filter-match':
      push('1,000 mixed routes', r.mixedVsBaseline, 'ns/msg vs 1,000 equality routes', 'lower');
      break;
    case 'ui-redraw':
      push('coalesced redraws', r.afterVsBefore, 'CPU vs a redraw per line', 'lower');
      break;
    case 'rabbitmq-header-types':
      push('typed headers', r.ratio, 'ns/msg vs plain copy', 'lower');
      break;
    case 'kafka-engine':
    case 'sqs-engine':
      push('engine', r.ratio, 'engine / raw client');
      break;
    default:
      push(r.bench, r.ratio, 'as the bench reports it');
      for (const row of rowsOf(r))
        push(String(row.label ?? row.name ?? row.config ?? ''), row.ratio, 'as the bench reports it');
  }
  return out;
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const fmt = (x: number, digits = 0) =>
  x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

interface Bar {
  readonly label: string;
  readonly value: number;
  readonly text: string;
  readonly color?: string;
}

/** Horizontal bars on a common scale, with optional reference lines (a target, 1.0). */
function barChart(bars: readonly Bar[], lines: readonly { at: number; label: string }[] = []): string {
  const labelW = 250;
  const plotW = 420;
  const rowH = 22;
  const top = lines.length > 0 ? 16 : 4;
  const max = Math.max(...bars.map((b) => b.value), ...lines.map((l) => l.at)) * 1.08 || 1;
  const x = (v: number) => labelW + (v / max) * plotW;
  const h = top + bars.length * rowH + 4;
  const rows = bars
    .map((b, i) => {
      const y = top + i * rowH;
      return (
        `<text x="${labelW - 8}" y="${y + 15}" text-anchor="end">${esc(b.label)}</text>` +
        `<rect x="${labelW}" y="${y + 3}" width="${Math.max(1, x(b.value) - labelW).toFixed(1)}" height="${rowH - 6}" fill="${b.color ?? '#3b7dd8'}"/>` +
        `<text x="${(x(b.value) + 6).toFixed(1)}" y="${y + 15}">${esc(b.text)}</text>`
      );
    })
    .join('');
  const refs = lines
    .map(
      (l) =>
        `<line x1="${x(l.at).toFixed(1)}" y1="${top - 2}" x2="${x(l.at).toFixed(1)}" y2="${h - 2}" stroke="#c0392b" stroke-dasharray="4 3"/>` +
        `<text x="${x(l.at).toFixed(1)}" y="11" text-anchor="middle" fill="#c0392b">${esc(l.label)}</text>`,
    )
    .join('');
  return `<svg class="chart" width="${labelW + plotW + 280}" height="${h}" role="img">${rows}${refs}</svg>`;
}

const notMeasured = (what: string) => `<p class="missing">Not measured: ${what}.</p>`;

function ratiosSection(results: ReadonlyMap<string, BenchJson>): string {
  const known: readonly string[] = BENCHES;
  const names = [
    ...BENCHES.filter((b) => b !== 'split-path'),
    ...[...results.keys()].filter((b) => !known.includes(b)),
  ];
  const blocks = names.map((name) => {
    const r = results.get(name);
    if (!r) return `<h3>${esc(name)}</h3>${notMeasured(`no bench-results/${name}.json`)}`;
    const ratios = ratiosOf(r);
    if (ratios.length === 0)
      return `<h3>${esc(name)}</h3><p class="missing">Measured, but it reports no ratio against a baseline.</p>`;
    const table = ratios
      .map(
        (q) =>
          `<tr><td>${esc(q.label)}</td><td class="num">${fmt(q.value, 2)}</td><td>${esc(q.against)}</td><td>${q.better} is better</td></tr>`,
      )
      .join('');
    const chart = barChart(
      ratios.map((q) => ({
        label: q.label,
        value: q.value,
        text: fmt(q.value, 2),
        color: q.better === 'higher' ? (q.value >= 0.9 ? '#2e8b57' : '#d9822b') : '#3b7dd8',
      })),
      [{ at: 1, label: '1.0' }],
    );
    return `<h3>${esc(name)}</h3><table><tr><th>what</th><th>ratio</th><th>of</th><th></th></tr>${table}</table>${chart}${loadNote(r)}`;
  });
  return `<section id="ratios"><h2>Ratios against the baselines</h2><p>Each bench runs its baseline in the same process, interleaved; a ratio is the median of its runs over the baseline's.</p>${blocks.join('')}</section>`;
}

function loadNote(r: BenchJson): string {
  const load = r.loadAverage as { start?: number[]; end?: number[] } | undefined;
  const parts = [
    r.runs !== undefined ? `runs: ${esc(String(r.runs as number))}` : '',
    load?.start && load.end ? `load average ${load.start.join(' ')} → ${load.end.join(' ')}` : '',
    typeof r.endedAt === 'string' ? `ended ${esc(r.endedAt)}` : '',
  ].filter(Boolean);
  return parts.length > 0 ? `<p class="note">${parts.join(' · ')}</p>` : '';
}

function routesSection(results: ReadonlyMap<string, BenchJson>): string {
  const r = results.get('rabbitmq-routes');
  if (!r)
    return `<section id="routes"><h2>Throughput vs routes</h2>${notMeasured('no bench-results/rabbitmq-routes.json')}</section>`;
  const rows = rowsOf(r);
  const bars = rows.map((row) => ({
    label: routesLabel(row.routes),
    value: num(row.msgsPerSec) ?? 0,
    text: `${fmt(num(row.msgsPerSec) ?? 0)} msg/s (${fmt(num(row.ratio) ?? 0, 2)} of 1 route)`,
  }));
  const match = rows.map((row) => ({
    label: routesLabel(row.routes),
    value: num(row.matchNsPerMessage) ?? 0,
    text: `${fmt(num(row.matchNsPerMessage) ?? 0)} ns/msg`,
    color: '#7a5cc2',
  }));
  // The broker alone, per routing shape: the engine's (an exchange per destination), the single
  // headers exchange earlier agents used (older results have only that one), and the default
  // exchange, the ceiling of any routing.
  const exchange = rows.flatMap((row) => {
    const destinations = `${fmt((num(row.routes) ?? 0) + 1)} destinations`;
    const bar = (shape: string, rate: unknown, ratio: unknown, color: string) =>
      num(rate) === undefined
        ? []
        : [
            {
              label: `${destinations}, ${shape}`,
              value: num(rate) ?? 0,
              text: `${fmt(num(rate) ?? 0)} msg/s (${fmt(num(ratio) ?? 0, 2)})`,
              color,
            },
          ];
    return [
      ...bar('fanout per destination', row.fanoutExchangesMsgsPerSec, row.fanoutExchangesRatio, '#2e6fba'),
      ...bar('one headers exchange', row.headersExchangeMsgsPerSec, row.headersExchangeRatio, '#888'),
      ...bar(
        'default exchange (no routing)',
        row.defaultExchangeMsgsPerSec,
        row.defaultExchangeRatio,
        '#bbb',
      ),
    ];
  });
  const flagsOf = (m: Record<string, unknown>) =>
    Array.isArray(m.nodeFlags) && m.nodeFlags.length === 0 ? ' (no source maps)' : '';
  const memory = (Array.isArray(r.agentMemory) ? (r.agentMemory as Record<string, unknown>[]) : []).flatMap(
    (m) => [
      {
        label: `${routesLabel(m.routes)}, ACTIVE${flagsOf(m)}`,
        value: num(m.activeMiB) ?? 0,
        text: `${fmt(num(m.activeMiB) ?? 0)} MiB`,
        color: '#2e8b57',
      },
      {
        label: `${routesLabel(m.routes)}, peak${flagsOf(m)}`,
        value: num(m.peakMiB) ?? 0,
        text: `${fmt(num(m.peakMiB) ?? 0)} MiB`,
        color: '#d9822b',
      },
    ],
  );
  return (
    `<section id="routes"><h2>Throughput vs routes (RabbitMQ, one queue)</h2>` +
    `<p>The engine copying a prefilled classic source; a third of the messages to the app, the rest spread over the routes.</p>` +
    barChart(bars) +
    `<h3>Route match per message (RouteIndex.match)</h3>${barChart(match)}` +
    (exchange.length > 0
      ? `<h3>The broker alone: confirmed publishes per routing shape</h3>${barChart(exchange)}`
      : '') +
    (memory.length > 0
      ? `<h3>Queue-agent process RSS</h3>${barChart(memory, [{ at: 150 * (1e6 / 2 ** 20), label: '150 MB' }])}`
      : notMeasured('the queue-agent memory')) +
    `${loadNote(r)}</section>`
  );
}

function latencySection(results: ReadonlyMap<string, BenchJson>): string {
  const r = results.get('session-stream');
  const title = '<h2>Latency distribution (session path, produce → local handler)</h2>';
  if (!r)
    return `<section id="latency">${title}${notMeasured('no bench-results/session-stream.json')}</section>`;
  const paths = (['direct', 'stream'] as const).map((p) => ({
    path: p,
    pct: ((r[p] as Record<string, unknown> | undefined)?.latencyPercentilesMs ?? {}) as Record<
      string,
      number
    >,
  }));
  const keys = Object.keys(paths[0]!.pct);
  if (keys.length === 0)
    return `<section id="latency">${title}${notMeasured('this result has no latency percentiles')}</section>`;
  const bars = keys.flatMap((k) =>
    paths.map(({ path, pct }) => ({
      label: `${k} ${path}`,
      value: num(pct[k]) ?? 0,
      text: `${fmt(num(pct[k]) ?? 0)} ms`,
      color: path === 'direct' ? '#888' : '#3b7dd8',
    })),
  );
  return `<section id="latency">${title}<p>Percentiles of every record's latency over the runs; grey: the sidecar reading the broker itself, blue: through the queue-agent's stream.</p>${barChart(bars)}${loadNote(r)}</section>`;
}

/** The split-path bench's phases (test/bench/split-path.bench.ts): one bar chart per broker. */
function lifecycleSection(results: ReadonlyMap<string, BenchJson>): string {
  const r = results.get('split-path');
  const title = '<h2>Lifecycle phases</h2>';
  const byBroker =
    r && typeof r.lifecycle === 'object' && r.lifecycle !== null
      ? Object.entries(r.lifecycle as Record<string, unknown>).filter(
          (e): e is [string, Record<string, unknown>[]] => Array.isArray(e[1]) && e[1].length > 0,
        )
      : [];
  if (byBroker.length === 0)
    return `<section id="lifecycle">${title}${notMeasured('yet: the split-path bench has written no phases to bench-results/split-path.json')}</section>`;
  const charts = byBroker.map(([broker, phases]) => {
    const bars = phases.map((p) => ({
      label: String(p.phase),
      value: num(p.ms) ?? 0,
      text: `${fmt((num(p.ms) ?? 0) / 1000, 1)} s`,
    }));
    return `<h3>${esc(broker)}</h3>${barChart(bars)}`;
  });
  return `<section id="lifecycle">${title}<p>Median of each phase over the runs of a real split through the cluster (sidecar, controller, queue-agent pod, port-forward).</p>${charts.join('')}${loadNote(r!)}</section>`;
}

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#222;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:4px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
.chart text{font:12px system-ui,sans-serif;fill:#222}.missing{color:#a33;font-style:italic}.note{color:#666;font-size:12px}`;

/** The report page from the results present (keyed by bench name). */
export function renderReport(results: ReadonlyMap<string, BenchJson>, generatedAt: string): string {
  const present = BENCHES.filter((b) => results.has(b));
  const others = [...results.keys()].filter((b) => !(BENCHES as readonly string[]).includes(b));
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Queue Split bench report</title><style>${STYLE}</style></head><body>
<h1>Queue Split bench report</h1>
<p>Generated ${esc(generatedAt)} from bench-results/*.json (${present.length + others.length} benches: ${esc([...present, ...others].join(', ') || 'none')}). Medians of each bench's runs; a ratio's baseline ran in the same process.</p>
${routesSection(results)}
${latencySection(results)}
${lifecycleSection(results)}
${ratiosSection(results)}
</body></html>
`;
}
