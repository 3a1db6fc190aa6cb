// A queue's broker connection comes from the agent pod's env: the pod env holds exactly the
// connection variables the workload's container has (copied as references by the controller,
// values resolved by the kubelet). These read it for the providers' connections.
import * as fs from 'node:fs';
import type { AgentQueueEnv } from '../../core/agentProtocol';

/** A connection the pod's env cannot make: the split cannot run, whatever is retried. */
export class EngineConfigError extends Error {}

/** The value of the env var a plan names for `what`; refused when it is unnamed or empty. */
export function envValue(name: string | undefined, what: string, queue: string): string {
  if (!name) throw new EngineConfigError(`queue ${queue}: the plan names no env var for ${what}`);
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new EngineConfigError(`queue ${queue}: env var ${name} (${what}) is empty in the queue-agent pod`);
  }
  return value;
}

/** A URL with the credentials of separate username/password env vars, when the plan has them. */
export function withCredentials(url: string, plan: { name: string; env: AgentQueueEnv }): string {
  if (!plan.env.username && !plan.env.password) return url;
  const parsed = new URL(url);
  if (plan.env.username)
    parsed.username = encodeURIComponent(envValue(plan.env.username, 'username', plan.name));
  if (plan.env.password)
    parsed.password = encodeURIComponent(envValue(plan.env.password, 'password', plan.name));
  return parsed.toString();
}

/** A CA bundle the controller mounted into the pod (core/tlsMount.ts). */
export function readCa(file: string, queue: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new EngineConfigError(
      `queue ${queue}: the CA bundle ${file} is not mounted in the queue-agent pod (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
}
