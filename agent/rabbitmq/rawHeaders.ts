// The raw header table of every message a connection receives, so a copy can keep each
// header's AMQP type (typedTable.ts; docs/design.md §7 "Header types").
//
// amqplib offers no way to see it: its frame decoder turns a content-header frame into plain JS
// values inside frame.js, through module-private functions its package `exports` do not expose,
// and delivers only the decoded properties; no option, event or codec hook carries the bytes.
// The one seam is the connection's `recvFrame()`, which amqplib calls for every frame (and
// calls again, through `this`, after reading more from the socket). This module wraps it on our
// own connection objects only: before delegating, it reads the first buffered frame's 7-byte
// header (type, channel, size: AMQP 0-9-1 §2.3.5, not amqplib's code) in `connection.rest`, and
// when that frame is a complete content header, attaches its header table's bytes to the
// properties object amqplib returns for it (which becomes `message.properties`). It depends on
// two amqplib internals, `recvFrame` and `rest`: test/conformance/rabbitmq-raw-headers.test.ts
// pins the amqplib version this was checked against and proves the capture on a real broker.
import type { ChannelModel, MessageProperties } from 'amqplib';
import { decodeTypedTable, type TypedTable } from './typedTable';

/** The amqplib version whose internals this module was checked against. */
export const CHECKED_AMQPLIB_VERSION = '2.3.1';

const RAW_HEADERS = Symbol('queue-split.raw-headers');
const FRAME_HEADER = 2;
/** type (1) + channel (2) + size (4); a frame-end octet follows the payload. */
const FRAME_PREFIX = 7;
/** class id (2), weight (2), body size (8), then the property flags. */
const PROPERTY_FLAGS_AT = 12;
const CONTENT_TYPE_FLAG = 1 << 15;
const CONTENT_ENCODING_FLAG = 1 << 14;
const HEADERS_FLAG = 1 << 13;
const EMPTY = Buffer.alloc(0);

interface FrameReader {
  rest: Buffer;
  recvFrame(): unknown;
}

function isFrameReader(c: unknown): c is FrameReader {
  const r = c as Partial<FrameReader> | null;
  return typeof r?.recvFrame === 'function' && Buffer.isBuffer(r.rest);
}

/** Makes every content header received on `model` carry its raw header table. Throws when the
 * amqplib internals it relies on are missing (an upgrade changed them). */
export function captureRawHeaders(model: ChannelModel): void {
  const connection: unknown = model.connection;
  if (!isFrameReader(connection)) {
    throw new Error(
      `amqplib's connection no longer has recvFrame()/rest (checked against ${CHECKED_AMQPLIB_VERSION}); agent/rabbitmq/rawHeaders.ts needs updating`,
    );
  }
  const original = connection.recvFrame;
  connection.recvFrame = function recvFrame(this: FrameReader): unknown {
    const table = headerTableOfFirstFrame(this.rest);
    const frame = original.call(this);
    if (table !== undefined && typeof frame === 'object' && frame !== null && 'size' in frame) {
      const fields = (frame as { fields?: unknown }).fields;
      if (typeof fields === 'object' && fields !== null) {
        Object.defineProperty(fields, RAW_HEADERS, { value: table, enumerable: false });
      }
    }
    return frame;
  };
}

/** The headers as sent, each with its AMQP type; undefined when the message did not come
 * through a capturing connection. */
export function typedHeaders(properties: MessageProperties): TypedTable | undefined {
  const raw = (properties as unknown as Record<symbol, unknown>)[RAW_HEADERS];
  return Buffer.isBuffer(raw) ? decodeTypedTable(raw) : undefined;
}

/** The header table (a copy) when `buffered` starts with a whole content-header frame; an
 * empty table when that frame has no headers; undefined for any other or a partial frame. */
function headerTableOfFirstFrame(buffered: Buffer): Buffer | undefined {
  if (buffered.length < FRAME_PREFIX || buffered.readUInt8(0) !== FRAME_HEADER) return undefined;
  const size = buffered.readUInt32BE(3);
  if (buffered.length < FRAME_PREFIX + size + 1) return undefined;
  const payload = buffered.subarray(FRAME_PREFIX, FRAME_PREFIX + size);
  const flags = payload.readUInt16BE(PROPERTY_FLAGS_AT);
  let at = PROPERTY_FLAGS_AT + 2;
  if (flags & CONTENT_TYPE_FLAG) at += 1 + payload.readUInt8(at);
  if (flags & CONTENT_ENCODING_FLAG) at += 1 + payload.readUInt8(at);
  if (!(flags & HEADERS_FLAG)) return EMPTY;
  const length = payload.readUInt32BE(at);
  // A copy: the frame is a slice of amqplib's read buffer, which must not be kept alive.
  return Buffer.from(payload.subarray(at + 4, at + 4 + length));
}
