// Where the split-path bench reads arrival times: a developer's local http handler (the sidecar
// POSTs each message as a CloudEvent, docs/design.md §8), and the fixture app's own records
// (test/fixtures/records.ts: one line per message with the time the pod processed it). Every
// message carries its send time (`x-sent-at`) and its window's tag (`x-bench-window`); the app's
// records carry only the id, so ids are `<window>-<sentAt>-<n>`.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { records } from '../../../fixtures/env/records';

export const SENT_AT = 'x-sent-at';
export const WINDOW = 'x-bench-window';

export const messageId = (window: string, sentAt: number, n: number) => `${window}-${sentAt}-${n}`;

export interface Handler {
  url: string;
  /** Latencies (ms, send → handler) per window tag. */
  arrivals: Map<string, number[]>;
  /** Last arrival time per window tag. */
  lastAt: Map<string, number>;
  /** While set, answer 503: the message stays in the session shadow (residue for a detach). */
  refuse: boolean;
  close(): Promise<void>;
}

export async function startHandler(): Promise<Handler> {
  const handler: Handler = {
    url: '',
    arrivals: new Map(),
    lastAt: new Map(),
    refuse: false,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (handler.refuse) {
        res.writeHead(503).end();
        return;
      }
      const now = Date.now();
      const window = String(req.headers[WINDOW] ?? '');
      const sent = Number(req.headers[SENT_AT]);
      if (window && Number.isFinite(sent)) {
        let list = handler.arrivals.get(window);
        if (!list) handler.arrivals.set(window, (list = []));
        list.push(now - sent);
        handler.lastAt.set(window, now);
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  handler.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return handler;
}

/** Latencies (ms, send → the app pod processed it) of the window's messages the app recorded. */
export function appLatencies(window: string): { latencies: number[]; lastAt: number } {
  const prefix = `${window}-`;
  let lastAt = 0;
  const latencies = records((r) => r.event === 'message' && r.id.startsWith(prefix)).flatMap((r) => {
    if (r.event !== 'message') return [];
    const at = Date.parse(r.at);
    lastAt = Math.max(lastAt, at);
    return [at - Number(r.id.split('-')[1])];
  });
  return { latencies, lastAt };
}

/** The count of distinct window messages the app recorded (a redelivery records twice). */
export function appCount(window: string): number {
  const prefix = `${window}-`;
  return new Set(
    records((r) => r.event === 'message' && r.id.startsWith(prefix)).map((r) =>
      r.event === 'message' ? r.id : '',
    ),
  ).size;
}
