// Kubernetes API calls over kept-alive connections. @kubernetes/client-node 1.x builds a new
// https.Agent for every request (KubeConfig.applySecurityAuthentication), so every call opens a
// TCP connection and makes a full TLS handshake, client certificate and CA parsing included:
// most of the CPU a poll or a reconcile costs, on both ends (docs/design.md "Where the CPU goes").
// This keeps one keep-alive agent per distinct set of connection options instead. Watches are
// not affected (client-node opens them through another path, one long-lived connection each).
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

type RequestContext = Parameters<KubeConfig['applySecurityAuthentication']>[0];

/** Idle connections close after this: well below any API server's idle timeout, so a reused
 * connection is never one the server is closing at that moment. */
const IDLE_MS = 10_000;
/** Idle connections kept per agent: the controller's bursts rarely run more calls at once. */
const MAX_FREE_SOCKETS = 8;
/** Agents kept at once (a credential plugin's rotated client certificate makes a new one). */
const MAX_AGENTS = 4;

const KEYED = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'servername', 'rejectUnauthorized'] as const;

/** What makes two agents' connections interchangeable: the TLS material and checks, hashed. */
function agentKey(kind: string, options: Record<string, unknown>): string {
  const hash = createHash('sha256').update(kind);
  for (const name of KEYED) {
    const value = options[name];
    hash.update(`\0${name}=`);
    if (value === undefined) continue;
    for (const part of Array.isArray(value) ? value : [value])
      hash.update(Buffer.isBuffer(part) ? part : String(part));
  }
  return hash.digest('hex');
}

/** Makes `kc`'s API clients reuse connections; returns `kc`. */
export function keepConnections(kc: KubeConfig): KubeConfig {
  const apply = kc.applySecurityAuthentication.bind(kc);
  const agents = new Map<string, http.Agent>();
  kc.applySecurityAuthentication = async (context: RequestContext): Promise<void> => {
    await apply(context);
    const fresh = context.getAgent();
    // A proxy agent (socks, http(s) proxy) stays as client-node made it.
    const kind =
      fresh?.constructor === https.Agent ? 'https' : fresh?.constructor === http.Agent ? 'http' : undefined;
    if (!fresh || !kind) return;
    // The agent's constructor options; typed on https.Agent only.
    const options = (fresh as https.Agent).options as Record<string, unknown>;
    const key = agentKey(kind, options);
    let kept = agents.get(key);
    if (!kept) {
      if (agents.size >= MAX_AGENTS) {
        const [oldest, agent] = agents.entries().next().value as [string, http.Agent];
        agent.destroy();
        agents.delete(oldest);
      }
      const keepAlive = { keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS, timeout: IDLE_MS };
      kept =
        kind === 'https'
          ? new https.Agent({ ...options, ...keepAlive })
          : new http.Agent({ ...options, ...keepAlive });
      agents.set(key, kept);
    }
    context.setAgent(kept);
  };
  return kc;
}
