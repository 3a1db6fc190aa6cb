// Liveness, readiness and metrics over HTTP, for both roles (controller and queue-agent). Ready means
// the agent has read its desired document and reconciled it at least once; live means the loop is still turning.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { HTTP_BOUNDS } from './sessionStream/bounds';

export interface Health {
  live(): boolean;
  ready(): boolean;
}

export function startServer(port: number, registry: Registry, health: Health): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const reply = (code: number, body: string, type = 'text/plain') => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (req.url === '/healthz') return reply(health.live() ? 200 : 503, health.live() ? 'ok' : 'stalled');
    if (req.url === '/readyz') return reply(health.ready() ? 200 : 503, health.ready() ? 'ok' : 'not ready');
    if (req.url === '/metrics') {
      registry.metrics().then(
        (text) => reply(200, text, registry.contentType),
        (err: unknown) => reply(500, String(err)),
      );
      return;
    }
    reply(404, 'not found');
  });
  // Every address: the kubelet probes the pod IP, a port-forward arrives on loopback. What may
  // reach the pod IP is the NetworkPolicy's to say; these bound what a reachable port costs.
  server.maxConnections = HTTP_BOUNDS.maxConnections;
  server.headersTimeout = HTTP_BOUNDS.headersTimeoutMs;
  server.requestTimeout = HTTP_BOUNDS.requestTimeoutMs;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '0.0.0.0', () => resolve(server));
  });
}

export const portOf = (server: http.Server) => (server.address() as AddressInfo).port;
