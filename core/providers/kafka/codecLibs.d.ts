// Types for the pure-JS codec libraries core/providers/kafka/codecs.ts uses (they ship none); only what it calls.
declare module 'snappyjs' {
  export function compress(input: Uint8Array): Uint8Array;
  export function uncompress(input: Uint8Array): Uint8Array;
}

declare module 'lz4js' {
  export function compressBound(n: number): number;
  /** Compresses `src[sIndex, sIndex + sLength)` into `dst` from 0; returns the size, 0 when it
   * did not shrink. */
  export function compressBlock(
    src: Uint8Array,
    dst: Uint8Array,
    sIndex: number,
    sLength: number,
    hashTable: Uint32Array,
  ): number;
  export function decompress(src: Uint8Array): Uint8Array;
}

declare module 'lz4js/xxh32.js' {
  export function hash(seed: number, src: Uint8Array, index: number, length: number): number;
}
