// Every credential, Secret value, header value and message body the test suites hand to Queue
// Split goes through this module, which records it in the run dir. The leak scan, the last file of
// the cluster suite (test/cluster/zz-no-secret-left.test.ts), greps everything Queue Split left
// behind for exactly these values: a value a test uses without registering it here cannot be
// looked for, so the scan also fails on a Secret created any other way.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { runDir } from '../env/paths';
import { SECRET_KINDS, type RegisteredSecret, type SecretKind } from './leakScan';

export const secretRecordFile = path.join(runDir, 'leak-scan', 'registered.jsonl');

const registered = new Set<string>();

/** Records `value` as something Queue Split must never write anywhere; returns it. */
export function registerSecret(kind: SecretKind, value: string, source: string): string {
  if (!SECRET_KINDS.includes(kind)) throw new Error(`registerSecret: unknown kind ${String(kind)}`);
  // Shorter values would match unrelated text (a name, a count): make the test's value longer.
  if (value.length < 5) {
    throw new Error(
      `registerSecret(${kind}, from ${source}): a value of ${value.length} characters cannot be scanned for without false hits; use one of at least 5`,
    );
  }
  const key = `${kind}\0${value}`;
  if (registered.has(key)) return value;
  registered.add(key);
  const entry: RegisteredSecret = { kind, source, value };
  fs.mkdirSync(path.dirname(secretRecordFile), { recursive: true });
  fs.appendFileSync(secretRecordFile, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  return value;
}

/**
 * Registers the credentials of a broker URL in every form a leak could take: the whole URL, its
 * `user:password@` part, the Basic authorization it becomes, and the bare password unless it is the
 * user name too (the local test brokers use guest/guest; the user name alone is not a secret).
 */
export function registerUrlCredentials(url: string, source: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`registerUrlCredentials(${source}): not a URL`);
  }
  if (parsed.password === '') return;
  const user = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  registerSecret('credential', url, `${source} (URL)`);
  registerSecret('credential', `${parsed.username}:${parsed.password}@`, `${source} (user:password@)`);
  registerSecret(
    'credential',
    Buffer.from(`${user}:${password}`).toString('base64'),
    `${source} (Basic authorization)`,
  );
  if (password !== user && password.length >= 5)
    registerSecret('credential', password, `${source} (password)`);
}

/** Creates a Secret whose every value is registered first (409: it exists already, kept). */
export async function createSecret(
  kc: KubeConfig,
  namespace: string,
  name: string,
  stringData: Record<string, string>,
): Promise<void> {
  for (const [key, value] of Object.entries(stringData)) {
    registerSecret('secret-value', value, `Secret ${name} key ${key}`);
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) registerUrlCredentials(value, `Secret ${name} key ${key}`);
  }
  await kc
    .makeApiClient(CoreV1Api)
    .createNamespacedSecret({ namespace, body: { metadata: { name }, stringData } })
    .catch((e: unknown) => {
      if ((e as { code?: number }).code !== 409) throw e;
    });
}

// One random marker per test process: every body and every message carries it, so one registered
// value stands for all of them and a leak of any body or of the header is found.
const bodyMarker = registerSecret(
  'message-body',
  `qs-body-${randomBytes(6).toString('hex')}`,
  'message bodies',
);
const headerMarker = registerSecret(
  'header-value',
  `qs-hdr-${randomBytes(6).toString('hex')}`,
  'x-qs-trace header',
);

/** The body of a test message: its id (the fixtures record ids from headers) and the marker. */
export function messageBody(id: string): string {
  return `body ${id} ${bodyMarker}`;
}

/**
 * Headers of a test message: the split header when `user` is set, and `x-qs-trace`, a header no
 * filter names, whose value Queue Split must pass along and never print. (Filter values are the
 * owners' names, which name splits and workloads in the open, so they cannot be scanned for.)
 */
export function messageHeaders(user?: string, more: Record<string, string> = {}): Record<string, string> {
  return { ...more, 'x-qs-trace': headerMarker, ...(user ? { 'x-queue-split-user': user } : {}) };
}
