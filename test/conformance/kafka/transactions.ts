// Transactions and reads by the Apache Kafka Java client (./foreign.ts compiles it): a scripted
// set of transactional producers that lays out interleaved transactions command by command,
// and a consumer of a whole topic at a given isolation level, as a Java application reads it.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { javaClasspath } from './foreign';

/** `-` is a plain idempotent producer (no transaction); any other name a transactional one. */
export type ProducerName = string;

export class JavaTransactions {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: { resolve: (line: string) => void; reject: (e: Error) => void }[] = [];
  private buffered = '';
  private stderr = '';
  private exited: Error | undefined;

  constructor(brokers: readonly string[], topic: string, transactionalPrefix: string) {
    this.child = spawn(
      'java',
      [
        '-cp',
        javaClasspath('ForeignTransactions'),
        'ForeignTransactions',
        brokers.join(','),
        topic,
        transactionalPrefix,
      ],
      { stdio: 'pipe' },
    );
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (d: string) => (this.stderr = (this.stderr + d).slice(-4000)));
    this.child.stdout.on('data', (d: string) => {
      this.buffered += d;
      for (let nl = this.buffered.indexOf('\n'); nl >= 0; nl = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        this.waiting.shift()?.resolve(line);
      }
    });
    this.child.on('exit', (code) => {
      this.exited = new Error(`the Java transactional producer exited (${code}): ${this.stderr.trim()}`);
      for (const w of this.waiting.splice(0)) w.reject(this.exited);
    });
  }

  private command(fields: readonly string[]): Promise<string> {
    for (const f of fields)
      if (/[\t\n]/.test(f)) throw new Error(`field ${JSON.stringify(f)} cannot be sent`);
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.child.stdin.write(`${fields.join('\t')}\n`);
    });
  }

  async begin(producer: ProducerName): Promise<void> {
    await this.command(['begin', producer]);
  }

  async commit(producer: ProducerName): Promise<void> {
    await this.command(['commit', producer]);
  }

  async abort(producer: ProducerName): Promise<void> {
    await this.command(['abort', producer]);
  }

  /** Sends one record as its own batch (flushed) and answers its offset. */
  async send(
    producer: ProducerName,
    partition: number,
    value: string,
    headers: Readonly<Record<string, string>>,
  ): Promise<bigint> {
    const answer = await this.command([
      'send',
      producer,
      String(partition),
      '-',
      value,
      ...Object.entries(headers).map(([k, v]) => `${k}=${v}`),
    ]);
    const offset = /^ok (\d+)$/.exec(answer)?.[1];
    if (offset === undefined) throw new Error(`unexpected answer ${JSON.stringify(answer)}`);
    return BigInt(offset);
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end();
    await gone;
  }
}

export interface JavaRead {
  readonly partition: number;
  readonly offset: bigint;
  /** The last value of each asked header, in the order asked (`undefined` when absent). */
  readonly headers: readonly (string | undefined)[];
}

/** Every data record of `topic` as a Java consumer with `isolation.level` reads it: from the
 * start to the end offsets at its start (the last stable offsets for read_committed). */
export function readWithJava(
  brokers: readonly string[],
  topic: string,
  isolation: 'read_committed' | 'read_uncommitted',
  headers: readonly string[],
): Promise<JavaRead[]> {
  const args = [
    '-cp',
    javaClasspath('ForeignConsumer'),
    'ForeignConsumer',
    brokers.join(','),
    topic,
    isolation,
  ];
  return new Promise((resolve, reject) => {
    execFile(
      'java',
      [...args, ...headers],
      { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if (err) {
          reject(
            new Error(`the Java consumer failed (${err.message.split('\n')[0]}): ${stderr.slice(-2000)}`),
          );
          return;
        }
        resolve(
          stdout
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => {
              const [partition, offset, ...values] = l.split('\t');
              return {
                partition: Number(partition),
                offset: BigInt(offset ?? '-1'),
                headers: values.map((v) => (v === '-' ? undefined : v)),
              };
            }),
        );
      },
    );
  });
}
