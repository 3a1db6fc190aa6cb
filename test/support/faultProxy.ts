// A TCP proxy between a client under test and its server (a broker, the agent's session
// endpoint) that injects the faults a real network path has: a slow connect, a link that stops
// carrying the client's bytes, a cut. One helper for every suite that needs these, so each
// fault means the same thing everywhere.
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface FaultProxy {
  /** Where the client connects instead of the server. */
  readonly host: string;
  readonly port: number;
  /** `upstream` with the proxy's host:port in place of the server's (an AMQP/WS URL). */
  url(upstream: string): string;
  /** Connections accepted so far. */
  connections(): number;
  /** Connections open now. */
  open(): number;
  /** New connections reach the server only after `ms` (0: at once); open ones are untouched. */
  delayConnect(ms: number): void;
  /**
   * Stops carrying the client's bytes to the server on the open connections (they are held, and
   * dropped by the next cut): what the client wrote after this never reaches the server.
   */
  stall(): void;
  /**
   * Stops carrying the server's bytes to the client on the open connections (dropped): the server
   * still gets and acts on what the client writes, but the client never hears the answers.
   */
  stallReplies(): void;
  /** Destroys every open connection (both sides, held bytes dropped); new ones pass normally. */
  cut(): void;
  close(): Promise<void>;
}

interface Link {
  client: net.Socket;
  upstream: net.Socket | undefined;
  stalled: boolean;
  /** Server bytes are dropped instead of reaching the client. */
  repliesStalled: boolean;
  /** Client bytes not written upstream: before the delayed connect, or while stalled. */
  held: Buffer[];
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const links = new Set<Link>();
  let accepted = 0;
  let connectDelayMs = 0;
  const drop = (link: Link) => {
    links.delete(link);
    link.held = [];
    link.client.destroy();
    link.upstream?.destroy();
  };
  const server = net.createServer((client) => {
    accepted++;
    const link: Link = { client, upstream: undefined, stalled: false, repliesStalled: false, held: [] };
    links.add(link);
    client.on('error', () => undefined);
    client.on('close', () => drop(link));
    client.on('data', (chunk: Buffer) => {
      if (link.stalled || !link.upstream) link.held.push(chunk);
      else link.upstream.write(chunk);
    });
    const connect = () => {
      if (!links.has(link)) return;
      const upstream = net.connect(target.port, target.host);
      link.upstream = upstream;
      upstream.on('error', () => undefined);
      upstream.on('close', () => drop(link));
      upstream.on('data', (chunk: Buffer) => {
        if (!link.repliesStalled) client.write(chunk);
      });
      // Written before the connect completes: the socket sends them, in order, once connected.
      if (!link.stalled) for (const chunk of link.held.splice(0)) upstream.write(chunk);
    };
    if (connectDelayMs > 0) setTimeout(connect, connectDelayMs);
    else connect();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    url: (upstream) => {
      const u = new URL(upstream);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    connections: () => accepted,
    open: () => links.size,
    delayConnect: (ms) => (connectDelayMs = ms),
    stall: () => {
      for (const link of links) link.stalled = true;
    },
    stallReplies: () => {
      for (const link of links) link.repliesStalled = true;
    },
    cut: () => {
      for (const link of [...links]) drop(link);
    },
    close: async () => {
      for (const link of [...links]) drop(link);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
