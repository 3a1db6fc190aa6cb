// test-group: serial (installs and uninstalls the controller with Helm)
// The Helm chart (deploy/helm/queue-split, README "Install with Helm") with a real helm (built from
// the Go module proxy: test/env/helm/build.sh) against a private etcd + kube-apiserver: nothing is
// installed into the shared API server, and no kubelet runs, so the controller's pods never start;
// what is checked is what Helm sends and removes.
//  - `helm template` renders exactly the objects deploy/manifests.ts gives for the same values
//    (parsed and compared as data), for the defaults, namespaced mode and every other value; the
//    one object left out is the release namespace (deploy/helmChart.ts says why);
//  - values.schema.json refuses a short image name, an unknown value, a bad namespace name;
//  - install creates those objects and the CRD; an upgrade to another image and replica count
//    changes exactly the fields the manifests say and no other object; an upgrade to namespaced
//    mode replaces the ClusterRoleBinding by RoleBindings; uninstall removes all it installed
//    and leaves the CRD (crds/) and the namespaces, which Helm did not create.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { CHART_DIR } from '../../deploy/helmChart';
import {
  controllerManifests,
  defaultInstall,
  type InstallOptions,
  type Manifest,
} from '../../deploy/manifests';
import { restrictedNamespaceLabels } from '../../core/podSecurity';
import { helmBinary } from '../env/helm/binary';
import { repoRoot } from '../env/paths';
import { pollUntil } from '../support/poll';
import { startPrivateApiServer, type PrivateApiServer } from '../support/privateApiServer';

const chart = path.join(repoRoot, CHART_DIR);
const RELEASE = 'queue-split';
const NAMESPACE = defaultInstall.namespace;
const digestImage = `ghcr.io/queuesplit/queue-split-agent@sha256:${'0123456789abcdef'.repeat(4)}`;

let helmPath = '';
let home = '';
let server: PrivateApiServer | undefined;
let kc: KubeConfig;

before(async () => {
  helmPath = await helmBinary();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-helm-'));
  server = await startPrivateApiServer('helm');
  kc = server.kc;
});

after(async () => {
  await server?.stop();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

let valuesFiles = 0;

/** Runs helm against the private API server, its config, cache and data in a folder of this test. */
function helm(args: string[], values?: object): Promise<{ code: number; stdout: string; stderr: string }> {
  const full = [...args];
  if (values) {
    const file = path.join(home, `values-${valuesFiles++}.json`); // JSON is YAML
    fs.writeFileSync(file, JSON.stringify(values));
    full.push('--values', file);
  }
  const env = {
    ...process.env,
    KUBECONFIG: server?.kubeconfig ?? '/nonexistent',
    HELM_CONFIG_HOME: path.join(home, 'config'),
    HELM_CACHE_HOME: path.join(home, 'cache'),
    HELM_DATA_HOME: path.join(home, 'data'),
  };
  return new Promise((resolve) => {
    execFile(helmPath, full, { env, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function helmOk(args: string[], values?: object): Promise<string> {
  const run = await helm(args, values);
  assert.equal(run.code, 0, `helm ${args.join(' ')} failed:\n${run.stderr}`);
  return run.stdout;
}

async function template(namespace: string, values: object): Promise<Manifest[]> {
  const text = await helmOk(['template', RELEASE, chart, '--namespace', namespace], values);
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

const keyOf = (m: Manifest) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`;
const sorted = (ms: Manifest[]) => [...ms].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));

/** controllerManifests less the controller's Namespace, which the chart leaves to the user. */
function expected(options: InstallOptions): Manifest[] {
  const all = controllerManifests(options);
  assert.deepEqual(
    all.filter((m) => m.kind === 'Namespace').map((m) => m.metadata.name),
    [options.namespace],
    'the one object the chart leaves out',
  );
  return all.filter((m) => m.kind !== 'Namespace');
}

describe('helm template renders what deploy/manifests.ts gives', () => {
  test('helm lint --strict accepts the chart', async () => {
    await helmOk(['lint', '--strict', chart]);
  });

  const cases: { name: string; namespace: string; values: object; options: InstallOptions }[] = [
    { name: 'the default values', namespace: NAMESPACE, values: {}, options: defaultInstall },
    {
      name: 'namespaced mode',
      namespace: NAMESPACE,
      values: { watchNamespaces: ['team-a', 'team-b'] },
      options: { ...defaultInstall, watchNamespaces: ['team-a', 'team-b'] },
    },
    {
      name: 'namespaced mode that names the release namespace too',
      namespace: 'ops',
      values: { watchNamespaces: ['team-a', 'ops'] },
      options: { ...defaultInstall, namespace: 'ops', watchNamespaces: ['team-a', 'ops'] },
    },
    {
      name: 'every other value, admission policies off, a ServiceMonitor with labels',
      namespace: 'ops-queue-split',
      values: {
        image: digestImage,
        agentImage: 'registry.example.com:5000/team/agent:1.2.3',
        replicas: 3,
        extraArgs: ['--resync-ms=500', '--step-timeout=30'],
        podAnnotations: { 'example.com/rollout': 'two', 'prometheus.io/scrape': 'true' },
        // Helm merges maps with the defaults: null drops a default (the CPU limit here).
        resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: null, memory: '1Gi' } },
        admissionPolicies: { enabled: false },
        metrics: { serviceMonitor: { enabled: true, labels: { release: 'kube-prometheus-stack' } } },
      },
      options: {
        namespace: 'ops-queue-split',
        image: digestImage,
        agentImage: 'registry.example.com:5000/team/agent:1.2.3',
        replicas: 3,
        extraArgs: ['--resync-ms=500', '--step-timeout=30'],
        podAnnotations: { 'example.com/rollout': 'two', 'prometheus.io/scrape': 'true' },
        resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
        admissionPolicies: false,
        serviceMonitor: { labels: { release: 'kube-prometheus-stack' } },
      },
    },
    {
      name: 'a ServiceMonitor without labels, namespaced, with the policies',
      namespace: NAMESPACE,
      values: { watchNamespaces: ['team-a'], metrics: { serviceMonitor: { enabled: true } } },
      options: { ...defaultInstall, watchNamespaces: ['team-a'], serviceMonitor: {} },
    },
  ];
  for (const c of cases) {
    test(`${c.name}: the same objects`, async () => {
      assert.deepEqual(sorted(await template(c.namespace, c.values)), sorted(expected(c.options)));
    });
  }

  test('values.schema.json refuses what the install would refuse, naming the value', async () => {
    const refusals: [object, RegExp][] = [
      [{ image: 'queuesplit/agent:test' }, /\/image/],
      [{ image: 'ghcr.io/queuesplit/queue-split-agent' }, /\/image/],
      [{ namespace: 'elsewhere' }, /additional properties 'namespace' not allowed/],
      [{ watchNamespaces: ['Team_A'] }, /\/watchNamespaces\/0/],
      [{ replicas: -1 }, /\/replicas/],
      [{ extraArgs: ['resync-ms=5'] }, /\/extraArgs\/0/],
      [{ metrics: { serviceMonitor: { enable: true } } }, /additional properties 'enable' not allowed/],
      [
        { metrics: { serviceMonitor: { labels: { 'app.kubernetes.io/name': 'x' } } } },
        /invalid propertyName 'app\.kubernetes\.io\/name'/,
      ],
    ];
    for (const [values, reason] of refusals) {
      const run = await helm(['template', RELEASE, chart], values);
      assert.notEqual(run.code, 0, `helm template accepted ${JSON.stringify(values)}`);
      assert.match(run.stderr, reason, JSON.stringify(values));
    }
  });
});

// ---- the live objects, read as the API server returns them ----

function restPath(m: Manifest): string {
  const [group, version] = m.apiVersion.includes('/') ? m.apiVersion.split('/') : ['', m.apiVersion];
  const plural = `${m.kind.toLowerCase().replace(/y$/, 'ie')}s`;
  const namespace = m.metadata.namespace ? `/namespaces/${m.metadata.namespace}` : '';
  return `${group ? `/apis/${group}/${version}` : `/api/${version}`}${namespace}/${plural}/${m.metadata.name}`;
}

/** The object as JSON (no client model in between), or undefined if there is none. */
async function live(m: Manifest): Promise<Record<string, unknown> | undefined> {
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const url = new URL(restPath(m), kc.getCurrentCluster()!.server);
  return new Promise((resolve, reject) => {
    https
      .get(url, options, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => {
          if (res.statusCode === 404) resolve(undefined);
          else if (res.statusCode === 200) resolve(JSON.parse(body) as Record<string, unknown>);
          else reject(new Error(`GET ${url.pathname}: ${res.statusCode} ${body}`));
        });
      })
      .on('error', reject);
  });
}

/** Every field the manifest sets has that value in the live object (the API server adds defaults). */
function assertHas(actual: unknown, wanted: unknown, where: string): void {
  if (wanted !== null && typeof wanted === 'object') {
    assert.ok(actual !== null && typeof actual === 'object', `${where}: missing`);
    if (Array.isArray(wanted)) {
      assert.ok(
        Array.isArray(actual) && actual.length === wanted.length,
        `${where}: ${JSON.stringify(actual)}`,
      );
      wanted.forEach((w, i) => assertHas((actual as unknown[])[i], w, `${where}[${i}]`));
    } else {
      for (const [k, w] of Object.entries(wanted))
        assertHas((actual as Record<string, unknown>)[k], w, `${where}.${k}`);
    }
  } else assert.deepEqual(actual, wanted, where);
}

async function assertInstalled(objects: Manifest[]): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  for (const m of objects) {
    const object = await live(m);
    assert.ok(object, `${keyOf(m)} was not created`);
    assertHas(object, m, keyOf(m));
    const metadata = object.metadata as {
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    };
    assert.equal(
      metadata.annotations?.['meta.helm.sh/release-name'],
      RELEASE,
      `${keyOf(m)} is the release's`,
    );
    found.set(keyOf(m), object);
  }
  return found;
}

/** Where two objects differ, as paths; bookkeeping the API server writes on every update is left out. */
function changedPaths(a: unknown, b: unknown, at = ''): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  const bookkeeping = [
    '.metadata.resourceVersion',
    '.metadata.generation',
    '.metadata.managedFields',
    '.status',
  ];
  if (bookkeeping.includes(at)) return [];
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.flatMap((item, i) => changedPaths(item, b[i], `${at}[${i}]`));
  }
  const isMap = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isMap(a) && isMap(b)) {
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].flatMap((k) =>
      changedPaths(a[k], b[k], `${at}.${k}`),
    );
  }
  return [at];
}

async function setNamespaceLabels(name: string, labels: Record<string, string>): Promise<void> {
  const api = kc.makeApiClient(CoreV1Api);
  const namespace = await api.readNamespace({ name });
  namespace.metadata!.labels = { ...namespace.metadata!.labels, ...labels };
  await api.replaceNamespace({ name, body: namespace });
}

describe('helm install, upgrade and uninstall against a real API server', () => {
  const upgraded: InstallOptions = { ...defaultInstall, image: digestImage, replicas: 3 };
  const namespaced: InstallOptions = { ...upgraded, watchNamespaces: ['team-a', 'team-b'] };
  const crdName = (parse(fs.readFileSync(path.join(chart, 'crds/queuesplit.crd.yaml'), 'utf8')) as Manifest)
    .metadata.name;

  test('install into a namespace made without labels: every object, the CRD, and NOTES that say to label it', async () => {
    // As `helm install --create-namespace` would make it: Helm writes its release record there first.
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
    const notes = await helmOk(['install', RELEASE, chart, '--namespace', NAMESPACE]);
    const label = Object.entries(restrictedNamespaceLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    assert.match(notes, /WARNING: the namespace queuesplit-system does not enforce PodSecurity "restricted"/);
    assert.ok(notes.includes(`kubectl label namespace ${NAMESPACE} ${label}`), notes);
    assert.match(notes, /serves every namespace/);

    assert.ok(
      await live({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: crdName },
      }),
    );
    const objects = await assertInstalled(expected(defaultInstall));
    // The heart of it, spelt out: the image, the flags, the cluster-wide binding.
    const deployment = objects.get(`Deployment/${NAMESPACE}/queuesplit-controller`) as {
      spec: { replicas: number; template: { spec: { containers: { image: string; args: string[] }[] } } };
    };
    assert.equal(deployment.spec.replicas, 2);
    assert.equal(deployment.spec.template.spec.containers[0]!.image, defaultInstall.image);
    assert.deepEqual(deployment.spec.template.spec.containers[0]!.args, [
      'controller',
      `--namespace=${NAMESPACE}`,
      `--agent-image=${defaultInstall.image}`,
    ]);
    assert.ok(objects.has('ClusterRoleBinding//queuesplit-controller'));
  });

  test('upgrade to another image and replica count changes exactly those fields, and no other object', async () => {
    await setNamespaceLabels(NAMESPACE, restrictedNamespaceLabels); // as the NOTES said
    const before = await assertInstalled(expected(defaultInstall));
    const notes = await helmOk(['upgrade', RELEASE, chart, '--namespace', NAMESPACE], {
      image: upgraded.image,
      replicas: upgraded.replicas,
    });
    assert.doesNotMatch(notes, /WARNING/);
    const after = await assertInstalled(expected(upgraded));
    const wanted = new Map(expected(defaultInstall).map((m) => [keyOf(m), m]));
    let changedObjects = 0;
    for (const m of expected(upgraded)) {
      const key = keyOf(m);
      const should = changedPaths(wanted.get(key), m);
      assert.deepEqual(changedPaths(before.get(key), after.get(key)), should, `${key}: what changed`);
      if (should.length === 0) {
        const version = (o: Record<string, unknown>) =>
          (o.metadata as { resourceVersion: string }).resourceVersion;
        assert.equal(version(after.get(key)!), version(before.get(key)!), `${key} was not written`);
      } else changedObjects++;
    }
    // The Deployment, and the confinement policy that names the agent image.
    assert.equal(changedObjects, 2);
  });

  test('upgrade to namespaced mode binds in the watched namespaces instead of cluster-wide', async () => {
    for (const name of namespaced.watchNamespaces!) {
      await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
    }
    const notes = await helmOk(['upgrade', RELEASE, chart, '--namespace', NAMESPACE], {
      image: namespaced.image,
      replicas: namespaced.replicas,
      watchNamespaces: namespaced.watchNamespaces,
    });
    assert.match(notes, /serves only the namespaces team-a, team-b/);
    await assertInstalled(expected(namespaced));
    // Helm removes what the release no longer renders: `kubectl apply` would leave it (README).
    assert.equal(
      await live({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'queuesplit-controller' },
      }),
      undefined,
    );
  });

  test('uninstall removes every object it installed; the CRD and the namespaces stay', async () => {
    await helmOk(['uninstall', RELEASE, '--namespace', NAMESPACE]);
    for (const m of expected(namespaced)) {
      await pollUntil(
        `${keyOf(m)} deleted`,
        () => live(m),
        (object) => object === undefined,
      );
    }
    // No release record is left (Helm keeps them as Secrets labelled owner=helm).
    const records = await kc
      .makeApiClient(CoreV1Api)
      .listNamespacedSecret({ namespace: NAMESPACE, labelSelector: 'owner=helm' });
    assert.deepEqual(
      records.items.map((s) => s.metadata!.name),
      [],
    );
    assert.equal((await helmOk(['list', '--namespace', NAMESPACE, '--short'])).trim(), '');
    // crds/: Helm never deletes a CRD (deleting it would delete every QueueSplit).
    assert.ok(
      await live({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: crdName },
      }),
    );
    for (const name of [NAMESPACE, ...namespaced.watchNamespaces!]) {
      assert.ok(
        await live({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
        `namespace ${name} stays`,
      );
    }
  });
});
