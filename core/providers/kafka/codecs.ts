// Record-batch compression for every kafkajs reader and writer of this project: the agent's
// engine and the sidecar's shadow consumer (agent/kafka/DECISIONS.md, "Compression").
// kafkajs 2.2.4 implements gzip only: a snappy, lz4 or zstd batch from another producer (the
// Java client, librdkafka) made every fetch of its partition throw "… not implemented". This
// module registers pure-JS codecs for all four in kafkajs' `CompressionCodecs` (no native
// addon: dist/agent.js stays one self-contained bundle), and remembers which codec decoded
// each record, so that a copy is written with its source batch's codec.
//
// Which codec decoded a record: kafkajs keeps no batch attributes on a decoded record, but
// every key, value and header of a compressed batch is a slice of the buffer `decompress`
// returned. Each decompressed buffer gets its own ArrayBuffer, keyed in a WeakMap.
import * as zlib from 'node:zlib';
import { promisify } from 'node:util';
import { decompress as zstdDecompress } from 'fzstd';
import { compressBlock, compressBound, decompress as lz4Decompress } from 'lz4js';
import { hash as xxh32 } from 'lz4js/xxh32.js';
import { compress as snappyCompress, uncompress as snappyUncompress } from 'snappyjs';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';

export type Codec = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

/** Why a batch could not be decompressed; agent/kafka/wire.ts parks its partition on it. */
export class CodecError extends Error {
  override readonly name = 'CodecError';
  constructor(
    readonly codec: Codec,
    cause: unknown,
  ) {
    super(
      `cannot decompress a ${codec} record batch: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
  }
}

const decodedBy = new WeakMap<ArrayBufferLike, Codec>();

/** A copy into an ArrayBuffer of its own: a pooled or shared one would mark other data. */
function owned(bytes: Uint8Array, codec: Codec): Buffer {
  const out = Buffer.from(new ArrayBuffer(bytes.length));
  out.set(bytes);
  decodedBy.set(out.buffer, codec);
  return out;
}

/** The codec of the batch `record` came from ('none' when uncompressed, or when it has no byte
 * to tell by: null key and value, no header values). */
export function codecOf(record: {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, Buffer | null | readonly (Buffer | null)[] | undefined>>;
}): Codec {
  const parts: (Buffer | null)[] = [record.value, record.key];
  for (const v of Object.values(record.headers)) {
    if (v !== undefined) parts.push(...(Array.isArray(v) ? v : [v as Buffer | null]));
  }
  for (const part of parts) {
    const codec = part ? decodedBy.get(part.buffer) : undefined;
    if (codec) return codec;
  }
  return 'none';
}

// Snappy as the Java client writes it (snappy-java's SnappyOutputStream, "xerial" framing): a
// 16-byte header, then blocks of [int32 length][raw snappy] of at most 32 KiB of input.
// Readers (Java, librdkafka) also accept raw snappy, which some producers send.
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER = Buffer.concat([XERIAL_MAGIC, Buffer.from([0, 0, 0, 1, 0, 0, 0, 1])]);
const SNAPPY_BLOCK = 32 * 1024;

export function snappyEncode(input: Buffer): Buffer {
  const parts: Uint8Array[] = [XERIAL_HEADER];
  for (let at = 0; at < input.length; at += SNAPPY_BLOCK) {
    const block = snappyCompress(input.subarray(at, at + SNAPPY_BLOCK));
    const length = Buffer.alloc(4);
    length.writeInt32BE(block.length);
    parts.push(length, block);
  }
  return Buffer.concat(parts);
}

export function snappyDecode(input: Buffer): Uint8Array {
  if (input.length < XERIAL_HEADER.length || !input.subarray(0, 8).equals(XERIAL_MAGIC))
    return snappyUncompress(input);
  const parts: Uint8Array[] = [];
  for (let at = XERIAL_HEADER.length; at < input.length;) {
    const length = input.readInt32BE(at);
    parts.push(snappyUncompress(input.subarray(at + 4, at + 4 + length)));
    at += 4 + length;
  }
  return Buffer.concat(parts);
}

// LZ4 frames as Kafka reads them (KafkaLZ4BlockInputStream): the Java reader refuses frames
// without the block-independence flag, which lz4js' own frame writer does not set. So frames
// are written here from lz4js' block compressor, each block with a fresh hash table. Blocks
// hold 60 KiB of input under the declared 64 KiB maximum: lz4js lets a block's last match start
// closer to its end than the LZ4 format allows (12 bytes), which the reference decoder (behind
// the Java client and the broker) refuses only when the block fills its 64 KiB buffer.
const LZ4_MAGIC = 0x184d2204;
const LZ4_BLOCK = 60 * 1024;
const LZ4_FLG = 0x60; // version 01, block independence
const LZ4_BD = 4 << 4; // maximum block size 64 KiB
// The frame descriptor checksum: the second byte of xxh32(FLG BD).
const LZ4_HC = (xxh32(0, Buffer.from([LZ4_FLG, LZ4_BD]), 0, 2) >> 8) & 0xff;
export function lz4Encode(input: Buffer): Buffer {
  const head = Buffer.alloc(7);
  head.writeUInt32LE(LZ4_MAGIC, 0);
  head[4] = LZ4_FLG;
  head[5] = LZ4_BD;
  head[6] = LZ4_HC;
  const parts: Buffer[] = [head];
  const scratch = Buffer.alloc(compressBound(LZ4_BLOCK));
  for (let at = 0; at < input.length; at += LZ4_BLOCK) {
    const block = input.subarray(at, at + LZ4_BLOCK);
    const size = compressBlock(block, scratch, 0, block.length, new Uint32Array(1 << 16));
    const length = Buffer.alloc(4);
    if (size === 0 || size >= block.length) {
      length.writeUInt32LE((0x80000000 | block.length) >>> 0); // stored uncompressed
      parts.push(length, Buffer.from(block));
    } else {
      length.writeUInt32LE(size);
      parts.push(length, Buffer.from(scratch.subarray(0, size)));
    }
  }
  parts.push(Buffer.alloc(4)); // end mark
  return Buffer.concat(parts);
}

type Compress = (input: Buffer) => Buffer | Promise<Buffer>;
type Decompress = (input: Buffer) => Uint8Array | Promise<Uint8Array>;

// Node ≥ 22.15 has zstd in zlib (the agent image runs Node 24); @types/node 20 does not know it.
const zlibZstd = (zlib as { zstdCompress?: (b: Buffer, cb: (e: Error | null, r: Buffer) => void) => void })
  .zstdCompress;
// Below it (Node 20: the sidecar in an older VS Code, this repo's tests) the reference zstd
// compiled to WebAssembly, inlined in @hpcc-js/wasm-zstd's one file (no native addon, nothing
// downloaded at install), loaded on the first zstd batch (agent/kafka/DECISIONS.md, "Compression").
let wasmZstd: Promise<(input: Uint8Array) => Uint8Array> | undefined;
async function zstdWasm(input: Buffer): Promise<Buffer> {
  wasmZstd ??= import('@hpcc-js/wasm-zstd').then(async ({ Zstd }) => {
    const zstd = await Zstd.load();
    return (b) => zstd.compress(b, 3); // level 3: the Java client's and zlib's default
  });
  wasmZstd.catch(() => (wasmZstd = undefined)); // a failed load is tried again on the next batch
  return Buffer.from((await wasmZstd)(input)); // a copy: the module's memory is reused
}
const zstdCompress: Compress = zlibZstd ? promisify(zlibZstd) : zstdWasm;

const codecs: Record<Exclude<Codec, 'none'>, { compress?: Compress; decompress: Decompress }> = {
  gzip: { compress: promisify(zlib.gzip), decompress: promisify(zlib.unzip) },
  snappy: { compress: snappyEncode, decompress: snappyDecode },
  lz4: { compress: lz4Encode, decompress: (b) => lz4Decompress(b) },
  zstd: { compress: zstdCompress, decompress: (b) => zstdDecompress(b) },
};

export const KAFKAJS_TYPE: Record<Codec, CompressionTypes> = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};

/** The codec copies from a batch of `source` are written with: the same one where it can be
 * encoded here, else gzip, which every Kafka client reads (kafkajs included) and which measured
 * at the throughput of uncompressed copies for a twentieth of the bytes (agent/kafka/DECISIONS.md,
 * "Compression"). */
export const DEFAULT_CODEC: Codec = 'gzip';
export function copyCodec(source: Codec): Codec {
  return source === 'none' || codecs[source].compress ? source : DEFAULT_CODEC;
}

const KAFKAJS_CODEC = {
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
} as const;
for (const name of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
  const { compress, decompress } = codecs[name];
  const codec = {
    async compress(encoder: { buffer: Buffer }): Promise<Buffer> {
      if (!compress) throw new Error(`${name} compression is not available in this runtime`);
      return await compress(encoder.buffer);
    },
    async decompress(buffer: Buffer): Promise<Buffer> {
      try {
        return owned(await decompress(buffer), name);
      } catch (err) {
        throw new CodecError(name, err);
      }
    },
  };
  CompressionCodecs[KAFKAJS_CODEC[name]] = () => codec;
}
