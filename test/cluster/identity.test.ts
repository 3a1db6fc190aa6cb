// Who a split belongs to, proven on the real API server (README "Who owns a split"): two developers
// who are Kubernetes *users* (client certificates from the CSR API) bound to nothing but the
// `queuesplit-developer` ClusterRole — never the admin kubeconfig. The sidecar takes the owner from
// a SelfSubjectReview, the `queuesplit-owner` ValidatingAdmissionPolicy makes that binding (create:
// spec.owner is the caller; update/delete: only the owner), and the role is enough for a whole
// session but for nothing else (README "The developer role"); a user missing a verb of it is
// refused by the RBAC preflight before anything is created.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import type * as amqp from 'amqplib';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { QueueSplit } from '../../core/crd/queueSplitSchema';
import { applyObjects } from '../../deploy/apply';
import { developerBinding } from '../../deploy/manifests';
import { userKubeconfig } from '../env/k8s/kubeconfig';
import { runDir } from '../env/paths';
import { clusterFixture } from '../support/clusterFixture';
import { publishTo, rabbitApp } from '../support/rabbitSplit';
import { pollUntil } from '../support/poll';
import { createSplit, getSplit, queueSplitApi, waitForSplitGone, waitForSplitPhase } from '../support/splits';
import { SidecarProcess, sidecarBundle } from '../sidecar/support';
import { ClusterApi } from '../../extension/kube/cluster';
import { connect } from '../../extension/kube/connection';
import { singleKubeconfig } from '../../core/kubeconfig';
import { KubeProblem } from '../../extension/kube/errors';
import { sessionPreflight } from '../../extension/kube/accessPreflight';
import { isMine } from '../../extension/model/owner';
import { myLiveSplit } from '../../extension/model/startSplit';

const fx = clusterFixture('qs-identity', { rabbitmq: true });
const services = fx.services;
const caFile = path.join(runDir, 'k8s', 'pki', 'ca.crt');
const code = (e: unknown) => (e as { code?: number }).code;
const body = (e: unknown) => String((e as { body?: unknown }).body ?? '');
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let admin: KubeConfig;
let namespace: string;
let source: string;
let userA: string;
let userB: string;
let devA: KubeConfig;
let devB: KubeConfig;
let kubeconfigA: string;
let kubeconfigB: string;
let sidecar: SidecarProcess | undefined;
let split: QueueSplit | undefined;
let ch: amqp.ConfirmChannel;
let server: http.Server | undefined;
/** Bodies A's local handler received. */
const received: string[] = [];

fx.setup(async () => {
  ({ kc: admin, namespace, ch } = fx);
  const suffix = namespace.slice(-6);
  // Two people whose OS user names would be the same (`vscode` in every dev container).
  userA = `dev-a-${suffix}`;
  userB = `dev-b-${suffix}`;
  for (const user of [userA, userB])
    await applyObjects(admin, [developerBinding(namespace, { kind: 'User', name: user })]);
  kubeconfigA = path.join(runDir, `kubeconfig-${namespace}-a`);
  devA = await userKubeconfig(admin, userA, namespace, caFile, kubeconfigA);
  kubeconfigB = path.join(runDir, `kubeconfig-${namespace}-b`);
  devB = await userKubeconfig(admin, userB, namespace, caFile, kubeconfigB);
  // The app reads AMQP_URL from a Secret the developer role may not read: the sidecar is given
  // the local value with --env, as `queueSplit.env` does.
  source = await rabbitApp(fx, 'orders-app');
  server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      received.push(text);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
});

// Before the fixture closes the broker connection and deletes the namespace.
fx.defer(async () => {
  await sidecar?.ensureDead();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
});
fx.defer(() => {
  for (const file of fs.readdirSync(runDir).filter((f) => f.startsWith(`kubeconfig-${namespace}-`)))
    fs.rmSync(path.join(runDir, file), { force: true });
});

test("with only the developer role, the sidecar runs a split whose owner is the caller's Kubernetes user name", async () => {
  const port = (server!.address() as AddressInfo).port;
  sidecar = new SidecarProcess(
    await sidecarBundle(),
    [
      `--kubeconfig=${kubeconfigA}`,
      `--namespace=${namespace}`,
      '--workload=deployment/orders-app',
      '--mode=http',
      `--target=http://127.0.0.1:${port}/`,
      `--env=AMQP_URL=${services.amqpUrl}`,
      `--state-file=${path.join(runDir, `sidecar-${namespace}-a.json`)}`,
    ],
    { ...process.env, KUBECONFIG: '' },
  );
  // Taken as soon as it exists, so the tests below run on it whatever this one finds.
  split = await pollUntil(
    'the sidecar created a QueueSplit',
    async () => {
      const list = (await admin
        .makeApiClient(CustomObjectsApi)
        .listNamespacedCustomObject({ ...queueSplitApi, namespace })) as { items: QueueSplit[] };
      if (sidecar!.of('error').length > 0)
        throw new Error(`the sidecar failed:\n${sidecar!.rawStdout.join('\n')}`);
      return list.items[0];
    },
    (s) => s !== undefined,
    60_000,
  );
  assert.ok(split);
  assert.equal(split.spec.owner, userA, 'the owner is the Kubernetes user, not the OS user');
  assert.deepEqual(split.spec.filter, { 'x-queue-split-user': userA }, 'the default filter is for that user');

  await sidecar.waitFor('ready', () => true, 180_000);
  await publishTo(ch, source, [`${source}-mine`], userA);
  await sidecar.waitFor('delivered', () => true, 60_000);
  assert.ok(
    received.some((r) => r.includes(`${source}-mine`)),
    'A received the message sent to A',
  );
});

test("another developer can neither update nor delete A's split: admission refuses, naming the rule", async () => {
  assert.ok(split, 'the first test created A’s split');
  const name = split.metadata.name;
  const asB = devB.makeApiClient(CustomObjectsApi);
  await assert.rejects(
    asB.patchNamespacedCustomObject(
      { ...queueSplitApi, namespace, name, body: { spec: { lease: split.spec.lease } } },
      MERGE,
    ),
    (e) => code(e) === 403 && /queuesplit-owner/.test(body(e)) && body(e).includes(userA),
    'B may not renew (update) A’s split',
  );
  await assert.rejects(
    asB.deleteNamespacedCustomObject({ ...queueSplitApi, namespace, name }),
    (e) => {
      console.log(`B's delete: ${body(e)}`);
      return code(e) === 403 && /queuesplit-owner/.test(body(e));
    },
    'B may not delete A’s split',
  );
  const still = await getSplit(admin, namespace, name);
  assert.ok(still && still.metadata.deletionTimestamp === undefined, 'A’s split is untouched');
  // A itself may update it (the sidecar renews the lease; here once more by hand).
  await devA
    .makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObject(
      { ...queueSplitApi, namespace, name, body: { metadata: { annotations: { 'qs-test/touched': 'a' } } } },
      MERGE,
    );
});

test("the extension's owner is the Kubernetes user: B's Stop All My Splits and adoption do not see A's split", async () => {
  assert.ok(split, 'the first test created A’s split');
  // Both run as the same OS user here (as two dev containers are both `vscode`).
  const asA = new ClusterApi(connect(singleKubeconfig(kubeconfigA), {}, {}));
  const asB = new ClusterApi(connect(singleKubeconfig(kubeconfigB), {}, {}));
  assert.equal(await asA.whoAmI(), userA);
  assert.equal(await asB.whoAmI(), userB);
  const seenByB = await asB.listSplits();
  assert.ok(
    seenByB.some((s) => s.metadata.name === split!.metadata.name),
    'B sees A’s split',
  );
  assert.equal(myLiveSplit(seenByB, split.spec.workload, userB), undefined, 'B does not adopt it');
  assert.equal(
    seenByB.filter((s) => isMine(s, userB)).length,
    0,
    'Stop All My Splits of B stops nothing of A',
  );
  assert.equal(
    myLiveSplit(await asA.listSplits(), split.spec.workload, userA)?.metadata.name,
    split.metadata.name,
  );
  // B's stop is refused by admission, in the extension's words.
  await assert.rejects(asB.deleteSplit(split.metadata.name, split.metadata.uid), (e) => {
    assert.ok(e instanceof KubeProblem);
    assert.match(e.message, /queuesplit-owner/);
    assert.match(e.suggestedAction, /ask its owner/i);
    return true;
  });
});

test("B's own split carrying A's routeId is Rejected (RouteIdTaken); deleting it neither ends nor pins A's route", async () => {
  assert.ok(split, 'the first test created A’s split');
  // Nothing in the API makes a routeId unique: B, with the developer role only, copies A's.
  const copy = await createSplit(devB, namespace, {
    workload: 'orders-app',
    queues: split.spec.queues,
    filter: { 'x-queue-split-user': userB },
    owner: userB,
    routeId: split.spec.routeId,
  });
  const rejected = await waitForSplitPhase(admin, namespace, copy.metadata.name, 'Rejected', 60_000);
  const condition = rejected.status?.conditions?.[0];
  assert.equal(condition?.reason, 'RouteIdTaken', JSON.stringify(rejected.status));
  assert.match(condition?.message ?? '', new RegExp(`spec\\.routeId.*${split.metadata.name}`));
  assert.ok(
    (rejected.status?.queues ?? []).every((q) => q.shadow === undefined && q.envOverrides === undefined),
    `the copy is shown nothing of A’s route: ${JSON.stringify(rejected.status?.queues)}`,
  );
  // B stops its copy: gone at once (the controller holds no finalizer on it) ...
  await devB
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...queueSplitApi, namespace, name: copy.metadata.name });
  await waitForSplitGone(admin, namespace, copy.metadata.name, 60_000);
  // ... and A's route is still the one delivering A's messages.
  await publishTo(ch, source, [`${source}-after-copy`], userA);
  await pollUntil(
    'A still receives what is sent to A',
    async () => received.some((r) => r.includes(`${source}-after-copy`)),
    (got) => got,
    60_000,
  );
  assert.equal((await getSplit(admin, namespace, split.metadata.name))?.status?.phase, 'Active');
});

test('a refused SelfSubjectReview names the missing permission and the fix, in the sidecar and the extension', async () => {
  // No credentials: the API server's anonymous user, which system:basic-user does not cover, so
  // the review is refused (403) as for a user whose cluster trimmed that binding.
  const anonymous = path.join(runDir, `kubeconfig-${namespace}-anonymous`);
  fs.writeFileSync(
    anonymous,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: { server: admin.getCurrentCluster()!.server, 'certificate-authority': caFile },
        },
      ],
      users: [{ name: 'nobody', user: {} }],
      contexts: [{ name: 'nobody', context: { cluster: 'c', user: 'nobody', namespace } }],
      'current-context': 'nobody',
    }),
  );
  await assert.rejects(new ClusterApi(connect(singleKubeconfig(anonymous), {}, {})).whoAmI(), (e) => {
    assert.ok(e instanceof KubeProblem, String(e));
    assert.match(e.message, /may not create selfsubjectreviews\.authentication\.k8s\.io/);
    assert.match(e.suggestedAction, /queuesplit-developer/);
    return true;
  });
  const refused = new SidecarProcess(
    await sidecarBundle(),
    [`--kubeconfig=${anonymous}`, '--workload=deployment/orders-app', '--mode=env'],
    { ...process.env, KUBECONFIG: '' },
  );
  const error = await refused.waitFor('error', () => true, 30_000);
  await refused.ensureDead();
  assert.equal(error.code, 'forbidden');
  assert.match(error.message, /may not create selfsubjectreviews\.authentication\.k8s\.io/);
  assert.match(error.suggestedAction, /queuesplit-developer/);
  const splits = (await admin
    .makeApiClient(CustomObjectsApi)
    .listNamespacedCustomObject({ ...queueSplitApi, namespace })) as { items: QueueSplit[] };
  assert.equal(splits.items.filter((x) => x.spec.owner !== userA).length, 0, 'nothing was created');
});

test('a split created with a forged owner is refused by admission, naming the rule and the caller', async () => {
  await assert.rejects(
    createSplit(devB, namespace, {
      workload: 'orders-app',
      queues: ['orders'],
      filter: { 'x-queue-split-user': userA },
      owner: userA,
    }),
    (e) => {
      console.log(`B's forged create: ${body(e)}`);
      return code(e) === 403 && /queuesplit-owner/.test(body(e)) && body(e).includes(userB);
    },
  );
});

test('the developer role cannot scale a workload, read a Secret, or delete a split of another', async () => {
  const apps = devB.makeApiClient(AppsV1Api);
  await assert.rejects(
    apps.patchNamespacedDeploymentScale(
      { name: 'orders-app', namespace, body: { spec: { replicas: 0 } } },
      MERGE,
    ),
    (e) => code(e) === 403,
    'scale',
  );
  await assert.rejects(
    apps.patchNamespacedDeployment(
      { name: 'orders-app', namespace, body: { metadata: { labels: { x: 'y' } } } },
      MERGE,
    ),
    (e) => code(e) === 403,
    'edit the workload',
  );
  await assert.rejects(
    devB.makeApiClient(CoreV1Api).readNamespacedSecret({ name: 'amqp', namespace }),
    (e) => code(e) === 403,
    'read a Secret',
  );
  await assert.rejects(
    devB.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace }),
    (e) => code(e) === 403,
    'list Secrets',
  );
  assert.ok(split, 'the first test created A’s split');
  await assert.rejects(
    devB.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      ...queueSplitApi,
      namespace,
      name: split.metadata.name,
    }),
    (e) => code(e) === 403,
    'delete A’s split',
  );
});

test('the owner stops the split: the sidecar detaches and the split is gone', async () => {
  assert.ok(sidecar && split, 'the first test started A’s sidecar');
  sidecar.kill('SIGTERM');
  const exit = await sidecar.exited;
  assert.equal(exit.code, 0, `the sidecar stopped cleanly:\n${sidecar.stderr}`);
  await waitForSplitGone(admin, namespace, split.metadata.name, 180_000);
});

test('a developer who may create but not renew or stop a split is refused before anything exists, naming the verbs and the fix', async () => {
  // The preflight's case: without it this user's split would be created (the workload cut
  // over) and then could be neither renewed nor stopped.
  const userC = `dev-c-${namespace.slice(-6)}`;
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: { name: 'create-only' },
      rules: [
        {
          apiGroups: ['queuesplit.dev'],
          resources: ['queuesplits'],
          verbs: ['create', 'get', 'list', 'watch'],
        },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: 'create-only' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'create-only' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: userC }],
    },
  });
  const kubeconfigC = path.join(runDir, `kubeconfig-${namespace}-c`);
  await userKubeconfig(admin, userC, namespace, caFile, kubeconfigC);

  const refused = new SidecarProcess(
    await sidecarBundle(),
    [
      `--kubeconfig=${kubeconfigC}`,
      '--workload=deployment/orders-app',
      '--mode=env',
      `--env=AMQP_URL=${services.amqpUrl}`,
      `--state-file=${path.join(runDir, `sidecar-${namespace}-c.json`)}`,
    ],
    { ...process.env, KUBECONFIG: '' },
  );
  const error = await refused.waitFor('error', () => true, 60_000);
  await refused.ensureDead();
  const splits = (await admin
    .makeApiClient(CustomObjectsApi)
    .listNamespacedCustomObject({ ...queueSplitApi, namespace })) as { items: QueueSplit[] };
  assert.deepEqual(
    splits.items.filter((s) => s.spec.owner === userC).map((s) => s.metadata.name),
    [],
    'nothing was created',
  );
  assert.equal(error.code, 'forbidden', error.message);
  assert.match(error.message, /patch queuesplits\.queuesplit\.dev \(to renew your split's lease\)/);
  assert.match(error.message, /delete queuesplits\.queuesplit\.dev \(to stop your split\)/);
  assert.doesNotMatch(error.message, /create queuesplits/, 'what is allowed is not listed');
  assert.match(error.message, /Nothing was created/);
  assert.match(error.suggestedAction, new RegExp(`--clusterrole=queuesplit-developer --user=${userC}`));

  // The extension's words for the same refusal: the command to use, not a sidecar flag.
  await assert.rejects(
    sessionPreflight(
      new ClusterApi(connect(singleKubeconfig(kubeconfigC), {}, {})),
      { kind: 'Deployment', name: 'orders-app' },
      { creates: true, streams: true },
    ),
    (e) => {
      assert.ok(e instanceof KubeProblem, String(e));
      assert.match(
        e.message,
        /patch queuesplits\.queuesplit\.dev.*delete queuesplits\.queuesplit\.dev.*Nothing was created/,
      );
      assert.match(e.suggestedAction, /queuesplit-developer.*Select Context\/Namespace/);
      // Its button copies the binding an admin runs, for this user (docs/extension-errors.md).
      assert.equal(
        (e.fixes[0] as { text?: string } | undefined)?.text,
        `kubectl create rolebinding queuesplit-developer-${userC} --clusterrole=queuesplit-developer --user=${userC} -n ${namespace}`,
      );
      return true;
    },
  );
  // The developer role passes the same preflight.
  await sessionPreflight(
    new ClusterApi(connect(singleKubeconfig(kubeconfigA), {}, {})),
    { kind: 'Deployment', name: 'orders-app' },
    { creates: true, streams: true },
  );
});
