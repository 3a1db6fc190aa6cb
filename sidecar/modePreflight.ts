// The mode part of the preflight (the RBAC part is core/accessPreflight.ts): what the
// chosen delivery mode needs from this machine is checked BEFORE the QueueSplit exists, because
// creating it scales down and rolls the team's workload. Every check is bounded
// (PREFLIGHT_TIMEOUT_MS), independent checks run concurrently, and a failure names the fix in
// both the extension's terms (setting or command) and the sidecar's flags.
//   http  — the target accepts a TCP connection (no request: a POST would be a delivery).
//   relay — RelayDeliverer.open() (sidecar/delivery/relay.ts) before the create: the local
//           broker answers, its credentials work and every destination exists.
//   env   — the unmodified consumer dials the brokers itself, so each declared broker (after the
//           address map and --env overrides) must accept a connection and, with the credentials
//           the connection already resolved (never a Secret the caller may not read), a login
//           (each provider's check: laptop/providers/contract.ts checkReach).
// Messages never carry a credential: URLs go through redactUrl, broker displays are redacted.
import * as net from 'node:net';
import type { AddressMap } from '../laptop/addressMap';
import type { QueueConnection } from '../laptop/brokerConnection';
import { SidecarError, errorText, systemCode } from '../laptop/errors';
import { laptopProvider } from '../laptop/providers/registry';
import type { SidecarDeliveryMode } from '../core/sidecarProtocol';
import { redactUrl } from '../laptop/redact';

/** Upper bound of one check; a few seconds, so a dead address fails fast and nothing is created. */
export const PREFLIGHT_TIMEOUT_MS = 5_000;

const NOTHING_CREATED = 'Nothing was created: your split and the team’s workload are untouched.';

/**
 * A failed check as the session reports it: says it was the preflight of which mode and, when
 * the session was about to create its split, that nothing was created.
 */
export function preflightFailure(err: unknown, mode: SidecarDeliveryMode, creates: boolean): unknown {
  if (!(err instanceof SidecarError)) return err;
  return new SidecarError(
    err.code,
    `Preflight (${mode} delivery): ${err.message}${creates ? ` ${NOTHING_CREATED}` : ''}`,
    err.suggestedAction,
    err.flag,
  );
}

/** Resolves when host:port accepts a TCP connection (closed at once); rejects with the system error. */
export function tcpConnect(host: string, port: number, timeoutMs = PREFLIGHT_TIMEOUT_MS): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(
        Object.assign(new Error(`no answer within ${timeoutMs / 1000}s`), { code: 'ETIMEDOUT' }),
      ),
    );
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

function targetPort(target: URL): number {
  if (target.port !== '') return Number(target.port);
  return target.protocol === 'https:' ? 443 : 80;
}

/** http mode: the target must accept connections, or the first message would wait in retries behind a rolled workload. */
export async function checkHttpTarget(target: URL, timeoutMs = PREFLIGHT_TIMEOUT_MS): Promise<void> {
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const port = targetPort(target);
  try {
    await tcpConnect(host, port, timeoutMs);
  } catch (err) {
    const code = systemCode(err) ?? errorText(err);
    throw new SidecarError(
      'target-unreachable',
      `the http target ${redactUrl(target.toString())} does not accept connections (${code} on ${host}:${port}).`,
      `Start the service you debug so it listens on ${host}:${port}, or fix the queueSplit.delivery.httpTarget setting (sidecar: --target), then start the split again.`,
      '--target',
    );
  }
}

const ENV_FIX =
  'env delivery needs direct broker reach from this machine: forward the broker port and map the address (the queueSplit.addressMap setting; sidecar: --map-address <in-cluster host:port>=127.0.0.1:<port>), ' +
  'or set a reachable value for the connection env var (the queueSplit.env setting; sidecar: --env), ' +
  'or choose http or relay delivery (the queueSplit.delivery.mode setting; sidecar: --mode).';

/**
 * env mode: every selected queue's broker, concurrently. All failures are reported together in
 * one error (the first one's code), each naming its queue.
 */
export async function checkEnvBrokers(
  connections: readonly QueueConnection[],
  map: AddressMap,
  timeoutMs = PREFLIGHT_TIMEOUT_MS,
): Promise<void> {
  const results = await Promise.allSettled(
    connections.map((c) =>
      laptopProvider(c.broker.provider).checkReach(c.queue.name, c.broker, map, timeoutMs),
    ),
  );
  const failures = results.flatMap((r, i) =>
    r.status === 'rejected' ? [{ queue: connections[i]?.queue.name ?? '?', err: r.reason as unknown }] : [],
  );
  const first = failures[0];
  if (first === undefined) return;
  const asSidecar = (err: unknown): SidecarError =>
    err instanceof SidecarError
      ? err
      : new SidecarError('broker-unreachable', errorText(err), 'Check the broker address.');
  const code = asSidecar(first.err).code;
  const auth = code === 'broker-auth';
  throw new SidecarError(
    code,
    failures.map((f) => `queue "${f.queue}": ${asSidecar(f.err).message}`).join(' | '),
    auth
      ? 'env delivery logs in to the brokers itself: check the credentials the workload declares, or set working ones for this machine (the queueSplit.env setting; sidecar: --env), or choose http or relay delivery (the queueSplit.delivery.mode setting; sidecar: --mode).'
      : ENV_FIX,
    auth ? '--env' : '--map-address',
  );
}
