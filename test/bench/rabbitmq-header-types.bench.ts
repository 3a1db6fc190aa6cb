// What keeping header types (docs/design.md §7 "RabbitMQ header types") costs per message,
// beside today's copy in the same process. No broker: both sides build a copy's publish options
// from one received message with 12 headers of mixed types (a filter header, trace ids,
// integers of several widths, a double, a timestamp, a nested table, an array).
// - plain: the copy built from the headers as amqplib decoded them (the engine before);
// - typed: the raw-header capture on the content-header frame (rawHeaders.ts, through a
//   connection stand-in that returns that frame), the typed decode and the same copy.
//
//   npx tsx test/bench/rabbitmq-header-types.bench.ts [messages-per-run] [runs]
//
// Prints a table and one JSON line.
import type { ChannelModel, Message, MessageProperties } from 'amqplib';
import { captureRawHeaders } from '../../agent/rabbitmq/rawHeaders';
import { shadowPublishOptions } from '../../agent/rabbitmq/properties';
import { median } from './stats';
import { benchRun } from './support/benchRun';

const recorder = benchRun('rabbitmq-header-types');

const perRun = Number(process.argv[2] ?? 50_000);
const runs = Number(process.argv[3] ?? 7);

/** One field table entry: key (short string) and an encoded value. */
const entry = (key: string, value: Buffer) =>
  Buffer.concat([Buffer.from([key.length]), Buffer.from(key), value]);
const longstr = (s: string) => {
  const b = Buffer.from(s);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([Buffer.from('S'), len, b]);
};
const tagged = (tag: string, bytes: number[]) => Buffer.from([tag.charCodeAt(0), ...bytes]);
const table = (entries: Buffer[]) => {
  const body = Buffer.concat(entries);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  return { body, withLength: Buffer.concat([len, body]) };
};
const nested = table([entry('n', tagged('s', [0, 7])), entry('ok', tagged('t', [1]))]);
const list = (() => {
  const items = Buffer.concat([tagged('B', [9]), longstr('two')]);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(items.length);
  return Buffer.concat([Buffer.from('A'), len, items]);
})();
const headers = table([
  entry('x-queue-split-user', longstr('alice')),
  entry('trace-id', longstr('4bf92f3577b34da6a3ce929d0e0e4736')),
  entry('span-id', longstr('00f067aa0ba902b7')),
  entry('tenant', longstr('acme')),
  entry('attempt', tagged('b', [1])),
  entry('priority-class', tagged('s', [0, 3])),
  entry('size', tagged('I', [0, 1, 0, 0])),
  entry('sequence', tagged('l', [0, 0, 0, 1, 0, 0, 0, 5])),
  entry('score', tagged('d', [0x40, 0x0a, 0, 0, 0, 0, 0, 0])),
  entry('sent-at', tagged('T', [0, 0, 0, 0, 0x65, 0x53, 0xf1, 0])),
  entry('meta', Buffer.concat([Buffer.from('F'), nested.withLength])),
  entry('tags', list),
]);

/** A content-header frame: type 2, channel 1, class 60, weight 0, body size, flags, properties. */
function headerFrame(): Buffer {
  const props = Buffer.concat([Buffer.from([0x20, 0x00]), headers.withLength]); // headers flag only
  const payload = Buffer.concat([Buffer.from([0, 60, 0, 0]), Buffer.alloc(8), props]);
  const prefix = Buffer.from([2, 0, 1, 0, 0, 0, 0]);
  prefix.writeUInt32BE(payload.length, 3);
  return Buffer.concat([prefix, payload, Buffer.from([0xce])]);
}

const plainHeaders: Record<string, unknown> = {
  'x-queue-split-user': 'alice',
  'trace-id': '4bf92f3577b34da6a3ce929d0e0e4736',
  'span-id': '00f067aa0ba902b7',
  tenant: 'acme',
  attempt: 1,
  'priority-class': 3,
  size: 65536,
  sequence: 4294967301,
  score: 3.25,
  'sent-at': { '!': 'timestamp', value: 1700000000 },
  meta: { n: 7, ok: true },
  tags: [9, 'two'],
};
const fields = { exchange: 'orders', routingKey: 'orders.created' };

// A stand-in for amqplib's connection: `recvFrame` returns the decoded header frame, as
// amqplib's does, while the capture reads the frame bytes buffered in `rest`.
const frame = headerFrame();
const stand = {
  rest: frame,
  recvFrame(): unknown {
    return { id: 60, channel: 1, size: 0, fields: { headers: plainHeaders } as MessageProperties };
  },
};
captureRawHeaders({ connection: stand } as unknown as ChannelModel);

let sink = 0;
function plainRun(): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < perRun; i++) {
    const msg = { fields, properties: { headers: plainHeaders } } as unknown as Message;
    sink += Object.keys(shadowPublishOptions(msg, 'guest').headers ?? {}).length;
  }
  return Number(process.hrtime.bigint() - started) / perRun;
}

function typedRun(): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < perRun; i++) {
    const received = stand.recvFrame() as { fields: MessageProperties };
    const msg = { fields, properties: received.fields } as unknown as Message;
    sink += Object.keys(shadowPublishOptions(msg, 'guest').headers ?? {}).length;
  }
  return Number(process.hrtime.bigint() - started) / perRun;
}

plainRun();
typedRun(); // warm up both paths
const plain: number[] = [];
const typed: number[] = [];
for (let i = 0; i < runs; i++) {
  plain.push(plainRun());
  typed.push(typedRun());
}
const p = median(plain);
const t = median(typed);
const fmt = (n: number) => n.toFixed(0).padStart(8);
console.log(`messages per run: ${perRun} (12 headers of mixed types), runs: ${runs}`);
console.log('copy headers            median ns/msg   runs (ns/msg)');
console.log(`plain (before)          ${fmt(p)}        ${plain.map((n) => n.toFixed(0)).join(' ')}`);
console.log(`typed (capture+decode)  ${fmt(t)}        ${typed.map((n) => n.toFixed(0)).join(' ')}`);
console.log(`typed / plain           ${(t / p).toFixed(2)}   added ${(t - p).toFixed(0)} ns per message`);
recorder.finish({
  bench: 'rabbitmq-header-types',
  headers: 12,
  perRun,
  runs,
  plainNsPerMsg: Math.round(p),
  typedNsPerMsg: Math.round(t),
  addedNsPerMsg: Math.round(t - p),
  ratio: Number((t / p).toFixed(3)),
  sink: sink > 0,
});
