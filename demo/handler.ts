// Alice's "debugged process" in the demo: a tiny HTTP handler that receives the sidecar's
// CloudEvents (binary mode) and remembers each event's body (the demo's message id) and source.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  id: string;
  source: string;
}

export async function startHandler(): Promise<{ url: string; received: Received[]; close(): void }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        id: Buffer.concat(chunks).toString('utf8'),
        source: String(req.headers['ce-source'] ?? ''),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/events`, received, close: () => server.close() };
}
