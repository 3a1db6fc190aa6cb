// An AMQP 0-9-1 field table decoded so that amqplib re-encodes it byte for byte (docs/design.md
// §5: headers are kept where the destination API allows; for RabbitMQ that includes their AMQP
// types). amqplib decodes every integer width to a JS number and re-encodes numbers by value
// (smallest signed integer, or double), so a `short` 7 would come back as a `byte` and a
// `float` as a `double`. Here every scalar keeps its wire type as amqplib's typed form
// (`{'!': type, value}`, its encoder's documented escape), 64-bit integers and timestamps are
// bigints (exact beyond 2^53), and nested tables are wrapped as `{'!': 'object'}` so a table
// with a key named `!` is not mistaken for a typed value.
//
// Not kept: a longstr whose bytes are not UTF-8 (amqplib encodes strings as UTF-8 only).

/** A header value in the form amqplib's encoder writes back with the same type tag. */
export type TypedValue =
  | boolean
  | string
  | null
  | Buffer
  | readonly TypedValue[]
  | { readonly '!': string; readonly value: unknown };

export type TypedTable = Record<string, TypedValue>;

/** Decodes a field table (without its 4-byte length prefix). Throws on a malformed table. */
export function decodeTypedTable(bytes: Buffer): TypedTable {
  const reader = new Reader(bytes);
  const table = reader.table(bytes.length);
  return table;
}

class Reader {
  private offset = 0;

  constructor(private readonly buf: Buffer) {}

  table(end: number): TypedTable {
    const out: TypedTable = {};
    while (this.offset < end) {
      const keyLength = this.buf.readUInt8(this.offset);
      this.offset += 1;
      const key = this.buf.toString('utf8', this.offset, this.offset + keyLength);
      this.offset += keyLength;
      out[key] = this.value();
    }
    return out;
  }

  private value(): TypedValue {
    const b = this.buf;
    const at = this.offset;
    const tag = String.fromCharCode(b.readUInt8(at));
    this.offset = at + 1;
    const o = this.offset;
    switch (tag) {
      case 't':
        this.offset += 1;
        return b.readUInt8(o) !== 0;
      case 'b':
        this.offset += 1;
        return { '!': 'int8', value: b.readInt8(o) };
      case 'B':
        this.offset += 1;
        return { '!': 'uint8', value: b.readUInt8(o) };
      case 's':
        this.offset += 2;
        return { '!': 'int16', value: b.readInt16BE(o) };
      case 'u':
        this.offset += 2;
        return { '!': 'uint16', value: b.readUInt16BE(o) };
      case 'I':
        this.offset += 4;
        return { '!': 'int32', value: b.readInt32BE(o) };
      case 'i':
        this.offset += 4;
        return { '!': 'uint32', value: b.readUInt32BE(o) };
      case 'l':
        this.offset += 8;
        return { '!': 'int64', value: b.readBigInt64BE(o) };
      case 'f':
        this.offset += 4;
        return { '!': 'float', value: b.readFloatBE(o) };
      case 'd':
        this.offset += 8;
        return { '!': 'double', value: b.readDoubleBE(o) };
      case 'D':
        // places (octet) and digits (32 bits); amqplib writes the digits unsigned, so reading
        // them unsigned keeps the bits of a negative decimal.
        this.offset += 5;
        return { '!': 'decimal', value: { places: b.readUInt8(o), digits: b.readUInt32BE(o + 1) } };
      case 'T':
        this.offset += 8;
        return { '!': 'timestamp', value: b.readBigUInt64BE(o) };
      case 'S': {
        const length = b.readUInt32BE(o);
        this.offset = o + 4 + length;
        return b.toString('utf8', o + 4, o + 4 + length);
      }
      case 'x': {
        const length = b.readUInt32BE(o);
        this.offset = o + 4 + length;
        return Buffer.from(b.subarray(o + 4, o + 4 + length));
      }
      case 'F': {
        const length = b.readUInt32BE(o);
        this.offset = o + 4;
        return { '!': 'object', value: this.table(o + 4 + length) };
      }
      case 'A': {
        const length = b.readUInt32BE(o);
        this.offset = o + 4;
        const end = o + 4 + length;
        const items: TypedValue[] = [];
        while (this.offset < end) items.push(this.value());
        return items;
      }
      case 'V':
        return null;
      default:
        throw new TypeError(`unknown AMQP field type tag ${JSON.stringify(tag)} at byte ${at}`);
    }
  }
}
