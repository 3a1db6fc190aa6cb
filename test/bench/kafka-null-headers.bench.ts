// Cost of the kafkajs extension that sends null header values (agent/kafka/nullHeaders.ts):
// encodes the record batches of one engine transaction (2000 records of 1 KiB, 3 headers each)
// with kafkajs' own encoder, unchanged and with the extension, alternating runs in one process
// (the wrapped method is swapped in and out) so load on the machine hits both alike. No broker.
//
//   npx tsx test/bench/kafka-null-headers.bench.ts [runs]
//
// Prints a table and one JSON line.
import Record from 'kafkajs/src/protocol/recordBatch/record/v0';
import { RecordBatch } from 'kafkajs/src/protocol/recordBatch/v0';
import Encoder from 'kafkajs/src/protocol/encoder';

const runs = Number(process.argv[2] ?? 7);
const records = Array.from({ length: 2000 }, (_, i) => ({
  offsetDelta: i,
  timestampDelta: 0,
  key: Buffer.from(`key-${i}`),
  value: Buffer.alloc(1024, 'x'),
  headers: {
    'x-message-id': Buffer.from(`id-${i}`),
    'x-queue-split-user': Buffer.from('alice'),
    'x-trace': Buffer.from('t'),
  },
}));

async function encodeMs(): Promise<number> {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 20; i++) {
    await RecordBatch({ records: records.map((r) => Record(r)) });
  }
  return Number(process.hrtime.bigint() - t0) / 1e6 / 20;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const proto = Encoder.prototype;
  const original = proto.writeVarIntBytes;
  await import('../../core/providers/kafka/nullHeaders');
  const wrapped = proto.writeVarIntBytes;
  await encodeMs(); // warm up
  const plain: number[] = [];
  const extended: number[] = [];
  for (let i = 0; i < runs; i++) {
    proto.writeVarIntBytes = original;
    plain.push(await encodeMs());
    proto.writeVarIntBytes = wrapped;
    extended.push(await encodeMs());
  }
  const row = (name: string, xs: number[]) =>
    `| ${name} | ${median(xs).toFixed(2)} | ${xs.map((x) => x.toFixed(2)).join(' ')} |`;
  console.log('| encoder | median ms per 2000-record batch | runs |\n| --- | --- | --- |');
  console.log(row('kafkajs 2.2.4', plain));
  console.log(row('with nullHeaders.ts', extended));
  console.log(
    JSON.stringify({
      bench: 'kafka-null-headers',
      plainMs: median(plain),
      extendedMs: median(extended),
      plain,
      extended,
    }),
  );
}

void main();
