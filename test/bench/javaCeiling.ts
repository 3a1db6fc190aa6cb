// Kafka's own Java tools against the same broker, for the same record count and size: the
// ceiling a client on this machine reaches (test/env/kafka.ts `ensureToolJars` fetches them).
//   producer  ProducerPerformance, acks=all, idempotent, 1 KiB records into 3 partitions,
//             batching as well as it can (batch.size 1 MiB, linger.ms 10: the defaults' 16 KiB
//             batches measured 5.3k rec/s here, 1 MiB 21k)
//   consumer  ConsumerPerformance, read_committed, reading back what the producer wrote
// Each runs in its own JVM; both tools time themselves (JVM start and the consumer's group join
// excluded: `fetch.nMsg.sec`), as the engine's rate is timed from its start.
import { execFileSync } from 'node:child_process';
import { ensureToolJars, kafkaLibs, kafkaToolsLibs } from '../env/kafka';
import { uniqueName } from '../support/services';
import { createTopics, drop, services } from './kafkaBench';

export interface JavaCeiling {
  /** ProducerPerformance records/s (idempotent, acks=all). */
  readonly produce: number;
  /** The same, transactional (a commit every `txnMs`). */
  readonly produceTxn: number;
  /** ConsumerPerformance records/s, read_committed. */
  readonly consume: number;
}

/** Commit interval of the transactional producer: about what the engine's 2000-record chunks
 * take at 20k rec/s. */
export const txnMs = 100;

function tool(main: string, args: string[]): string {
  return execFileSync('java', ['-cp', `${kafkaToolsLibs}/*:${kafkaLibs}/*`, main, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
}

/** "20000 records sent, 18234.5 records/sec (17.81 MB/sec), ..." (the last summary line). */
export function producedPerSec(out: string): number {
  const m = [...out.matchAll(/records sent, ([\d.]+) records\/sec/g)].pop();
  if (!m) throw new Error(`ProducerPerformance printed no summary:\n${out}`);
  return Number(m[1]);
}

/** The CSV line after the header; `fetch.nMsg.sec` is the last column. */
export function consumedPerSec(out: string): number {
  const lines = out.trim().split('\n');
  const header = lines.findIndex((l) => l.includes('fetch.nMsg.sec'));
  const fields = lines[header + 1]?.split(',').map((f) => f.trim());
  const names = lines[header]?.split(',').map((f) => f.trim()) ?? [];
  const value = Number(fields?.[names.indexOf('fetch.nMsg.sec')]);
  if (header < 0 || !Number.isFinite(value)) throw new Error(`ConsumerPerformance printed no stats:\n${out}`);
  return value;
}

export async function javaCeiling(records: number): Promise<JavaCeiling> {
  ensureToolJars();
  const base = uniqueName('bench-kjava');
  const topics = [`${base}-src`, `${base}-txn`];
  const group = `${base}-g`;
  await createTopics(topics);
  try {
    const bootstrap = services.kafkaBrokers.join(',');
    const produce = (topic: string, txn: boolean) =>
      producedPerSec(
        tool('org.apache.kafka.tools.ProducerPerformance', [
          '--bootstrap-server',
          bootstrap,
          '--topic',
          topic,
          '--num-records',
          String(records),
          '--record-size',
          '1024',
          '--throughput',
          '-1',
          '--command-property',
          'acks=all',
          'enable.idempotence=true',
          'batch.size=1048576',
          'linger.ms=10',
          ...(txn ? ['--transactional-id', `${base}-tx`, '--transaction-duration-ms', String(txnMs)] : []),
        ]),
      );
    const result = { produce: produce(topics[0]!, false), produceTxn: produce(topics[1]!, true) };
    const consume = consumedPerSec(
      tool('org.apache.kafka.tools.ConsumerPerformance', [
        '--bootstrap-server',
        bootstrap,
        '--topic',
        topics[1]!,
        '--num-records',
        String(records),
        '--group',
        group,
        '--timeout',
        '30000',
        '--command-property',
        'isolation.level=read_committed',
        'auto.offset.reset=earliest',
      ]),
    );
    return { ...result, consume };
  } finally {
    await drop(topics, [group]);
  }
}
