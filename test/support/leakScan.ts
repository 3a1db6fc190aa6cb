// The leak scan: looks for registered secrets (test/support/secrets.ts) in what Queue Split left
// behind — its pods' logs, the sidecar's output, test-results/, and the QueueSplits, Events,
// ConfigMaps and workload annotations in the API server. A hit names the file or object and the
// kind of secret and who registered it, never the value (README: no credentials, bodies or
// header values in logs, status or errors — the scan's report is one of those too).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { QUEUE_SPLIT_GROUP, QUEUE_SPLIT_PLURAL, QUEUE_SPLIT_VERSION } from '../../core/crd/queueSplitSchema';
import { keptLogsDirOf } from '../env/k8s/node/realNode';
import { pollUntil } from './poll';

export const SECRET_KINDS = ['credential', 'secret-value', 'header-value', 'message-body'] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

export interface RegisteredSecret {
  kind: SecretKind;
  /** Who registered it, e.g. "Secret amqp key url": safe to print. */
  source: string;
  value: string;
}

export interface Hit {
  where: string;
  kind: SecretKind;
  source: string;
}

/** The value as written raw, inside a JSON string, URL-encoded and base64-encoded. */
export function leakForms(value: string): string[] {
  const forms = new Set([
    value,
    JSON.stringify(value).slice(1, -1),
    encodeURIComponent(value),
    Buffer.from(value).toString('base64'),
  ]);
  return [...forms];
}

export function findLeaks(where: string, text: string, secrets: readonly RegisteredSecret[]): Hit[] {
  const hits: Hit[] = [];
  for (const s of secrets) {
    if (leakForms(s.value).some((form) => text.includes(form))) {
      hits.push({ where, kind: s.kind, source: s.source });
    }
  }
  return hits;
}

/** The registered secrets; an absent or empty record fails: a scan for nothing proves nothing. */
export function readRegistered(file: string): RegisteredSecret[] {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const secrets = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      const entry = JSON.parse(line) as Partial<RegisteredSecret>;
      if (typeof entry.value !== 'string' || !SECRET_KINDS.includes(entry.kind as SecretKind)) {
        throw new Error(`${file} line ${i + 1}: not a registered secret (kind, source, value)`);
      }
      return entry as RegisteredSecret;
    });
  if (secrets.length === 0) {
    throw new Error(
      `${file} records no secret: the suites register every credential, Secret value, header value and body through test/support/secrets.ts, so an empty record means they did not run in this run dir or bypassed it — run the cluster suite first`,
    );
  }
  return secrets;
}

export interface FileRoot {
  dir: string;
  /** Which files under `dir` (path relative to it) belong to the scan. */
  include: (relative: string) => boolean;
}

/** Where the sidecar suite keeps each sidecar's stdout and stderr for the scan. */
export const sidecarTranscriptDir = (runDir: string) => path.join(runDir, 'leak-scan', 'sidecar');

/** Files of Queue Split's making under the run dir and the checkout. */
export function productRoots(runDir: string, repoRoot: string): FileRoot[] {
  return [
    // The real node's pod logs, kept past their pods: `<ns>_<pod>_<uid>/<container>/<n>.log`;
    // Queue Split's containers are `controller` and `agent` (the fixture apps' logs are the test's).
    { dir: keptLogsDirOf(runDir), include: (f) => /\/(agent|controller)\/\d+\.log$/.test(f) },
    { dir: sidecarTranscriptDir(runDir), include: (f) => f.endsWith('.log') },
    { dir: path.join(repoRoot, 'test-results'), include: () => true },
  ];
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .flatMap((e) => (e.isFile() ? [path.join(e.parentPath, e.name)] : []));
}

export function scanFiles(roots: readonly FileRoot[], secrets: readonly RegisteredSecret[]) {
  const hits: Hit[] = [];
  let files = 0;
  for (const root of roots) {
    for (const file of walk(root.dir)) {
      if (!root.include(path.relative(root.dir, file))) continue;
      const bytes = fs.readFileSync(file);
      // Screenshots and other binaries: a secret in them is not text a grep finds.
      if (bytes.subarray(0, 8000).includes(0)) continue;
      files++;
      hits.push(...findLeaks(file, bytes.toString('utf8'), secrets));
    }
  }
  return { hits, files };
}

const withoutManagedFields = (o: { metadata?: { managedFields?: unknown } }) => ({
  ...o,
  metadata: { ...o.metadata, managedFields: undefined },
});

type Texts = Array<[where: string, text: string]>;

/**
 * What the scan reads in the API server, in one namespace or in all: QueueSplits (the whole
 * object), Events, ConfigMaps (data and annotations), workload annotations.
 */
export async function collectTexts(kc: KubeConfig, namespace?: string): Promise<Texts> {
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const api = { group: QUEUE_SPLIT_GROUP, version: QUEUE_SPLIT_VERSION, plural: QUEUE_SPLIT_PLURAL };
  const [splits, events, configMaps, deployments, statefulSets] = await Promise.all([
    // No QueueSplit resource (the CRD not installed yet, as in the sidecar suite): no splits.
    (
      (namespace === undefined
        ? custom.listClusterCustomObject(api)
        : custom.listNamespacedCustomObject({ ...api, namespace })) as Promise<{
        items: Array<{ metadata?: { name?: string; namespace?: string; managedFields?: unknown } }>;
      }>
    ).catch((err: unknown) => {
      if ((err as { code?: number }).code === 404) return { items: [] };
      throw err;
    }),
    namespace === undefined ? core.listEventForAllNamespaces() : core.listNamespacedEvent({ namespace }),
    namespace === undefined
      ? core.listConfigMapForAllNamespaces()
      : core.listNamespacedConfigMap({ namespace }),
    namespace === undefined
      ? apps.listDeploymentForAllNamespaces()
      : apps.listNamespacedDeployment({ namespace }),
    namespace === undefined
      ? apps.listStatefulSetForAllNamespaces()
      : apps.listNamespacedStatefulSet({ namespace }),
  ]);
  const texts: Texts = [];
  for (const s of splits.items) {
    texts.push([
      `QueueSplit ${s.metadata?.namespace}/${s.metadata?.name}`,
      JSON.stringify(withoutManagedFields(s)),
    ]);
  }
  for (const e of events.items) {
    texts.push([
      `Event ${e.metadata?.namespace}/${e.metadata?.name}`,
      JSON.stringify(withoutManagedFields(e)),
    ]);
  }
  for (const c of configMaps.items) {
    texts.push([
      `ConfigMap ${c.metadata?.namespace}/${c.metadata?.name}`,
      JSON.stringify({ data: c.data, binaryData: c.binaryData, annotations: c.metadata?.annotations }),
    ]);
  }
  const workloads = [
    ...deployments.items.map((w) => ['Deployment', w] as const),
    ...statefulSets.items.map((w) => ['StatefulSet', w] as const),
  ];
  for (const [kind, w] of workloads) {
    texts.push([
      `${kind} ${w.metadata?.namespace}/${w.metadata?.name} annotations`,
      JSON.stringify([w.metadata?.annotations, w.spec?.template.metadata?.annotations]),
    ]);
  }
  return texts;
}

export async function scanCluster(kc: KubeConfig, secrets: readonly RegisteredSecret[]) {
  const texts = await collectTexts(kc);
  return { hits: texts.flatMap(([where, text]) => findLeaks(where, text, secrets)), objects: texts.length };
}

/** Where test/support/kube.ts' deleteNamespace keeps what a namespace held when it was deleted. */
export const snapshotDir = (runDir: string) => path.join(runDir, 'leak-scan', 'namespaces');

/**
 * Keeps what the scan would read in `namespace` before a test deletes it, so the Events, statuses
 * and ConfigMaps of every test namespace are scanned, not only those still standing at the end.
 * A failure to read it is kept as such and fails the scan (a namespace already gone lists empty).
 */
export async function snapshotNamespace(kc: KubeConfig, namespace: string, runDir: string): Promise<void> {
  fs.mkdirSync(snapshotDir(runDir), { recursive: true });
  const file = path.join(snapshotDir(runDir), `${namespace}.json`);
  // A list can fail for a moment (a CRD just reinstalled is Established before its API is
  // served everywhere): read again for a while before recording the failure.
  try {
    const texts = await pollUntil(
      `the objects of namespace ${namespace}`,
      () => collectTexts(kc, namespace),
      () => true,
      15_000,
    );
    fs.writeFileSync(file, JSON.stringify(texts));
  } catch (err) {
    fs.writeFileSync(`${file}.failed`, err instanceof Error ? err.message : String(err));
  }
}

export function scanSnapshots(runDir: string, secrets: readonly RegisteredSecret[]) {
  const dir = snapshotDir(runDir);
  const names = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  const failed = names.filter((n) => n.endsWith('.failed')).map((n) => n.slice(0, -'.json.failed'.length));
  const hits: Hit[] = [];
  let objects = 0;
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const texts = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as Texts;
    objects += texts.length;
    for (const [where, text] of texts) {
      hits.push(...findLeaks(`${where} (when its namespace was deleted)`, text, secrets));
    }
  }
  return { hits, objects, namespaces: names.length - failed.length, failed };
}

/** One line per hit: where, which kind, registered by whom. Never the value. */
export function describeHits(hits: readonly Hit[]): string {
  return hits.map((h) => `${h.where}: a ${h.kind} (registered by: ${h.source})`).join('\n');
}
