// Records from a client this project did not write: the Apache Kafka Java client (the jars
// `npm run env:up` fetched), compiled once per source version into the cache. kafkajs cannot
// send some legal records (a null header value), and the Java client is what most producers use.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { kafkaLibs } from '../../env/kafka';
import { cacheDir } from '../../env/paths';

/** One header: text, raw bytes, or a null value (`new RecordHeader(name, null)`). */
export type ForeignHeader = readonly [name: string, value: string | Buffer | null];

export interface ForeignRecord {
  readonly partition: number;
  readonly key?: string | null;
  readonly value: string | null;
  readonly timestamp?: number;
  readonly headers: readonly ForeignHeader[];
}

/** The classpath of one program of ./java (`ForeignProducer`, `ForeignTransactions`,
 * `ForeignConsumer`) with the client jars, compiled once per source version into the cache. */
export function javaClasspath(program: string): string {
  return `${compiled(program)}:${kafkaLibs}/*`;
}

function compiled(program: string): string {
  const source = path.join(__dirname, 'java', `${program}.java`);
  const text = fs.readFileSync(source);
  const dir = path.join(
    cacheDir,
    'foreign-producer',
    createHash('sha256').update(text).digest('hex').slice(0, 16),
  );
  if (!fs.existsSync(path.join(dir, `${program}.class`))) {
    if (!fs.existsSync(kafkaLibs))
      throw new Error(`the Kafka client jars are missing at ${kafkaLibs}: run \`npm run env:up\` first`);
    const tmp = `${dir}.tmp-${process.pid}`;
    fs.mkdirSync(tmp, { recursive: true });
    execFileSync('javac', ['-cp', `${kafkaLibs}/*`, '-d', tmp, source], { stdio: 'pipe' });
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir); // atomic: a parallel run never sees half a build
  }
  return dir;
}

function field(s: string | null | undefined): string {
  if (s === null || s === undefined) return '-';
  if (/[\t\n]/.test(s) || s === '-')
    throw new Error(`foreign producer: ${JSON.stringify(s)} cannot be sent as a field`);
  return s;
}

function header([name, value]: ForeignHeader): string {
  if (/[\t\n=~]/.test(name))
    throw new Error(`foreign producer: header name ${JSON.stringify(name)} is not supported`);
  if (value === null) return name;
  if (Buffer.isBuffer(value)) return `${name}~${value.toString('hex')}`;
  return `${name}=${field(value)}`;
}

export interface ForeignOptions {
  /** `all` (the default, idempotent) or `1`: a leader-only producer, which a broker still
   * accepts while the topic is below its min.insync.replicas. */
  readonly acks?: 'all' | '1';
  /** The Java client's `compression.type` for its batches (default none). */
  readonly compression?: JavaCompression;
}

/** The Java client's `compression.type` values. */
export type JavaCompression = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

function invocation(
  brokers: readonly string[],
  topic: string,
  records: readonly ForeignRecord[],
  o: ForeignOptions,
) {
  const lines = records.map((r) =>
    [
      String(r.partition),
      field(r.key),
      field(r.value),
      r.timestamp === undefined ? '-' : String(r.timestamp),
      ...r.headers.map(header),
    ].join('\t'),
  );
  return {
    args: [
      '-cp',
      javaClasspath('ForeignProducer'),
      'ForeignProducer',
      brokers.join(','),
      topic,
      '4194304',
      o.acks ?? 'all',
      o.compression ?? 'none',
    ],
    input: `${lines.join('\n')}\n`,
  };
}

function checkSent(out: string, expected: number): void {
  const sent = Number(out.trim().split('\n').pop());
  if (sent !== expected) throw new Error(`foreign producer sent ${sent} of ${expected} records`);
}

/** Sends `records` to `topic` in order with the Java client (acks=all, idempotent, unless told). */
export function produceWithJava(
  brokers: readonly string[],
  topic: string,
  records: readonly ForeignRecord[],
  options: ForeignOptions = {},
): void {
  const { args, input } = invocation(brokers, topic, records, options);
  const out = execFileSync('java', args, {
    input,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  checkSent(out, records.length);
}

/** As `produceWithJava`, without blocking this process: an engine under test in the same
 * process keeps copying while the Java client sends (and retries through a broker outage). */
export function produceWithJavaAsync(
  brokers: readonly string[],
  topic: string,
  records: readonly ForeignRecord[],
  options: ForeignOptions = {},
): Promise<void> {
  const { args, input } = invocation(brokers, topic, records, options);
  return new Promise((resolve, reject) => {
    const child = execFile('java', args, { encoding: 'utf8', timeout: 180_000 }, (err, stdout, stderr) => {
      if (err) {
        reject(
          new Error(`foreign producer failed (${err.message.split('\n')[0]}): ${stderr.trim().slice(-2000)}`),
        );
        return;
      }
      try {
        checkSent(stdout, records.length);
        resolve();
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
    child.stdin?.end(input);
  });
}
