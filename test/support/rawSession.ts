// Raw clients of the queue-agent's session port, for the tests of its bounds
// (agent/sessionStream/bounds.ts): an upgrade whose frames the test writes by hand.
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { SESSION_SUBPROTOCOL } from '../../core/sessionStream';

/** A raw TCP client of the session path: the upgrade, then whatever bytes the test sends. */
export function rawUpgrade(
  url: string,
): Promise<{ status: number; socket: net.Socket; closed: Promise<number> }> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const opened = Date.now();
    const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now() - opened)));
    socket.on('error', () => undefined); // a cut socket is what is tested
    socket.once('connect', () =>
      socket.write(
        `GET ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
          `Sec-WebSocket-Protocol: ${SESSION_SUBPROTOCOL}\r\n\r\n`,
      ),
    );
    socket.once('data', (chunk: Buffer) => {
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(chunk.toString('latin1'))?.[1] ?? 0);
      resolve({ status, socket, closed });
    });
    socket.once('close', () => resolve({ status: 0, socket, closed }));
    setTimeout(() => reject(new Error('no answer to the upgrade within 10 s')), 10_000).unref();
  });
}

/** The start of a masked binary frame that announces `length` bytes (the rest never comes). */
export function frameHeader(length: number): Buffer {
  const header = Buffer.alloc(14);
  header[0] = 0x82; // FIN, binary
  header[1] = 0x80 | 127; // masked, 64-bit length
  header.writeBigUInt64BE(BigInt(length), 2);
  randomBytes(4).copy(header, 10);
  return header;
}
