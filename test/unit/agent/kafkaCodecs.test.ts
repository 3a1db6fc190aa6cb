// The pure parts of core/providers/kafka/codecs.ts (agent/kafka/DECISIONS.md, "Compression"): the framings written for snappy and
// lz4 read back to the same bytes, which codec decoded a record, and what copies are written
// with. That the Java client and the broker read these framings is the conformance test's job
// (test/conformance/kafka-compression.test.ts: the broker decompresses each batch it appends).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as zlib from 'node:zlib';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { decompress as zstdDecompress } from 'fzstd';
import { decompress as lz4Decompress } from 'lz4js';
import {
  codecOf,
  copyCodec,
  DEFAULT_CODEC,
  lz4Encode,
  snappyDecode,
  snappyEncode,
} from '../../../core/providers/kafka/codecs';

// 200 KiB of JSON-like text: several snappy (32 KiB) and lz4 (60 KiB) blocks.
const input = Buffer.from(
  Array.from({ length: 2000 }, (_, i) => JSON.stringify({ id: i, user: `u${i % 7}`, note: 'fragile' })).join(
    '',
  ),
);

interface KafkajsCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}
const registered = (type: CompressionTypes) => CompressionCodecs[type as 1 | 2 | 3 | 4]() as KafkajsCodec;

describe('Kafka codecs', () => {
  test('snappy (xerial framing, as the Java client writes it) and raw snappy read back', () => {
    const framed = snappyEncode(input);
    assert.ok(framed.length < input.length / 2, 'it compresses');
    assert.deepEqual(Buffer.from(snappyDecode(framed)), input);
    assert.deepEqual(Buffer.from(snappyDecode(snappyEncode(Buffer.alloc(0)))), Buffer.alloc(0));
  });

  test('lz4 frames: block independence flagged, several blocks, read back', () => {
    const frame = lz4Encode(input);
    assert.equal(frame.readUInt32LE(0), 0x184d2204, 'LZ4 frame magic');
    assert.equal(frame[4]! & 0x20, 0x20, 'block independence, which the Java reader requires');
    assert.deepEqual(Buffer.from(lz4Decompress(frame)), input);
  });

  test('a record remembers the codec that decompressed its batch; an uncompressed one says none', async () => {
    for (const [type, name] of [
      [CompressionTypes.GZIP, 'gzip'],
      [CompressionTypes.Snappy, 'snappy'],
      [CompressionTypes.LZ4, 'lz4'],
      [CompressionTypes.ZSTD, 'zstd'],
    ] as const) {
      const codec = registered(type);
      const out = await codec.decompress(await codec.compress({ buffer: input }));
      assert.deepEqual(out, input);
      const value = out.subarray(10, 20); // kafkajs decodes values as slices of the batch buffer
      assert.equal(codecOf({ key: null, value, headers: {} }), name);
      assert.equal(codecOf({ key: null, value: null, headers: { h: [null, out.subarray(0, 1)] } }), name);
    }
    assert.equal(codecOf({ key: null, value: Buffer.from(input.subarray(0, 5)), headers: {} }), 'none');
  });

  test('copies keep their source codec, zstd included on every Node (zlib from 22.15, WebAssembly below)', () => {
    for (const c of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) assert.equal(copyCodec(c), c);
    assert.notEqual(DEFAULT_CODEC, 'none', 'the fallback for a codec with no encoder still compresses');
  });

  test('zstd batches are zstd frames, and one batch is not overwritten by the next', async () => {
    const codec = registered(CompressionTypes.ZSTD);
    const other = Buffer.from(input).reverse();
    const [a, b] = [await codec.compress({ buffer: input }), await codec.compress({ buffer: other })];
    assert.equal(a.readUInt32LE(0), 0xfd2fb528, 'zstd frame magic');
    assert.ok(a.length < input.length / 4, 'it compresses');
    assert.deepEqual(
      Buffer.from(zstdDecompress(a)),
      input,
      `read back (${'zstdCompress' in zlib ? 'zlib' : 'wasm'})`,
    );
    assert.deepEqual(Buffer.from(zstdDecompress(b)), other);
  });
});
