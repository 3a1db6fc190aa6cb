// Reads the test broker's own log segment files (this machine's env, `npm run env:up`): the
// compression codec of every stored record batch and the bytes a topic takes on disk, as the
// broker wrote them and independent of any client's decoding.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Codec } from '../../../core/providers/kafka/codecs';
import { runDir } from '../../env/paths';

const NAMES: readonly Codec[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/** The broker's data directory (test/env writes `log.dirs` into its server.properties). */
function logDir(): string {
  const file = path.join(runDir, 'kafka', 'server.properties');
  const dir = /^log\.dirs=(.+)$/m.exec(fs.readFileSync(file, 'utf8'))?.[1];
  if (!dir) throw new Error(`no log.dirs in ${file}: is the test environment up (npm run env:up)?`);
  return dir.trim();
}

const segments = (topic: string, partition: number) => {
  const dir = path.join(logDir(), `${topic}-${partition}`);
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .sort()
    .map((f) => path.join(dir, f));
};

/** The codec of every data batch of `topic`/`partition`, in log order (control batches, the
 * transaction markers, left out). A v2 record batch: baseOffset int64, length int32, then at
 * byte 21 its attributes int16, bits 0-2 the codec, bit 5 "control" (Kafka protocol guide,
 * "Record Batch"). */
export function batchCodecs(topic: string, partition: number): Codec[] {
  const out: Codec[] = [];
  for (const file of segments(topic, partition)) {
    const log = fs.readFileSync(file);
    for (let at = 0; at + 23 <= log.length;) {
      const length = log.readInt32BE(at + 8);
      if (length <= 0) break;
      const attributes = log.readInt16BE(at + 21);
      if ((attributes & 0x20) === 0) {
        const codec = NAMES[attributes & 0x07];
        if (!codec) throw new Error(`${file}@${at}: unknown codec id ${attributes & 0x07}`);
        out.push(codec);
      }
      at += 12 + length;
    }
  }
  return out;
}

/** Bytes the log segments of `topic` take (every partition). */
export function topicBytes(topic: string, partitions: number): number {
  let n = 0;
  for (let p = 0; p < partitions; p++) for (const f of segments(topic, p)) n += fs.statSync(f).size;
  return n;
}
