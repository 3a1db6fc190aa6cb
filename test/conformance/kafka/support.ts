// Kafka engine timings for the suite (the local single broker answers in milliseconds, so
// fences are probed and partitions checked often), and a socket factory that remembers the
// sockets of one engine so a test can sever them as a network failure would.
import * as net from 'node:net';
import * as tls from 'node:tls';
import type { ISocketFactory } from 'kafkajs';
import type { KafkaTiming } from '../../../agent/kafka/config';

export const kafkaTestTiming: Partial<KafkaTiming> = {
  stepTimeoutMs: 10_000, // Kafka proofs are live reads (no statistics lag to wait out)
  quiesceMs: 500,
  pollIntervalMs: 200,
  fetchMaxWaitMs: 100,
  fenceProbeMs: 500,
  retryInitialMs: 100,
  retryMaxMs: 1_000,
  partitionCheckMs: 1_000,
};

export function trackingSocketFactory(tracked: Set<net.Socket>): ISocketFactory {
  return ({ host, port, ssl, onConnect }) => {
    const socket = ssl
      ? tls.connect(Object.assign({ host, port, servername: host }, ssl), onConnect)
      : net.connect({ host, port }, onConnect);
    socket.setKeepAlive(true, 60_000);
    tracked.add(socket);
    socket.once('close', () => tracked.delete(socket));
    return socket;
  };
}
