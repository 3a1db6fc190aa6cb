// Maps the positions of an agent stack trace to the TypeScript source: the image runs the agent
// without --enable-source-maps (deploy/Dockerfile says why), so a trace names functions as the
// source does but points into the minified dist/agent.js. Paste the trace in:
//   npx tsx deploy/mapStack.ts [agent.js.map] < trace.txt
// The map must be the one of the same build: dist/agent.js.map after `npm run build` of the
// release's commit, or the image's own (`docker run --rm --entrypoint cat <image> /app/agent.js.map`).
import * as fs from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import * as path from 'node:path';

/** The trace with each `[<dir>/]agent.js:<line>:<column>` replaced by `<source>:<line>:<column>`. */
export function mapStack(trace: string, map: SourceMapPayload): string {
  const sourceMap = new SourceMap(map);
  return trace.replace(/(?:[^\s(]*\/)?agent\.js:(\d+):(\d+)/g, (whole, line: string, column: string) => {
    // Stack traces count from 1, source maps from 0.
    const entry = sourceMap.findEntry(Number(line) - 1, Number(column) - 1) as Partial<{
      originalSource: string;
      originalLine: number;
      originalColumn: number;
    }>;
    if (entry.originalSource === undefined) return whole;
    const source = entry.originalSource.replace(/^(\.\.\/)+/, '');
    return `${source}:${(entry.originalLine ?? 0) + 1}:${(entry.originalColumn ?? 0) + 1}`;
  });
}

if (require.main === module) {
  const file = process.argv[2] ?? path.resolve(__dirname, '../dist/agent.js.map');
  const map = JSON.parse(fs.readFileSync(file, 'utf8')) as SourceMapPayload;
  process.stdout.write(mapStack(fs.readFileSync(0, 'utf8'), map));
}
