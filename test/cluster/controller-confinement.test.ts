// The admission policy shipped with the install (deploy/admissionPolicy.ts, README "Install")
// confines the controller's ServiceAccount even where its RBAC role would allow more. The test acts
// as that ServiceAccount (a TokenRequest token, so the real authenticator, RBAC and admission chain
// decide) against the real API server: each forbidden change is refused with the policy's message,
// and the cutover changes the controller makes are accepted. Changes that should pass are sent as
// server-side dry runs, so no pod starts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  NetworkingV1Api,
  RbacAuthorizationV1Api,
  type V1Deployment,
} from '@kubernetes/client-node';
import { agentRoleRules } from '../../agent/controller/agentObjects';
import { ADMISSION_POLICY_NAME, OWNED_LABEL } from '../../deploy/admissionPolicy';
import { testInstall } from '../../deploy/install';
import { clusterFixture } from '../support/clusterFixture';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../../core/podSecurity';

const fx = clusterFixture('qs-confine');
const DRY = 'All';
let admin: KubeConfig;
let namespace: string;
let apps: AppsV1Api;
let core: CoreV1Api;
let rbac: RbacAuthorizationV1Api;

/** A client authenticated as the controller's own ServiceAccount. */
async function asController(kc: KubeConfig): Promise<KubeConfig> {
  const token = await kc.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    namespace: testInstall.namespace,
    name: 'queuesplit-controller',
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const cluster = kc.getCurrentCluster();
  assert.ok(cluster && token.status?.token, 'a token for the controller ServiceAccount');
  const controller = new KubeConfig();
  controller.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'queuesplit-controller', token: token.status.token }],
    contexts: [{ name: 'controller', cluster: cluster.name, user: 'queuesplit-controller' }],
    currentContext: 'controller',
  });
  return controller;
}

function tenantWorkload(): V1Deployment {
  return {
    metadata: { name: 'shop', labels: { app: 'shop' }, annotations: { 'team.example/owner': 'shop-team' } },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: 'shop' } },
      template: {
        metadata: { labels: { app: 'shop' } },
        spec: {
          securityContext: restrictedPodSecurityContext,
          containers: [
            {
              name: 'app',
              image: 'registry.example/shop:1',
              securityContext: restrictedContainerSecurityContext,
              env: [
                { name: 'ORDERS_QUEUE', value: 'orders' },
                { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: 'rabbit', key: 'url' } } },
              ],
            },
          ],
        },
      },
    },
  };
}

function agentDeployment(image: string, serviceAccount = 'qs-sa-shop-x'): V1Deployment {
  const labels = { 'queuesplit.dev/component': 'queue-agent', [OWNED_LABEL]: 'shop' };
  return {
    metadata: { name: 'qs-agent-shop-x', labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: serviceAccount,
          securityContext: restrictedPodSecurityContext,
          containers: [{ name: 'agent', image, securityContext: restrictedContainerSecurityContext }],
        },
      },
    },
  };
}

/** The request is refused by the API server with the policy's message. */
async function refused(what: string, request: () => Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(request, (err: unknown) => {
    const body = String((err as { body?: unknown }).body ?? err);
    assert.match(
      body,
      new RegExp(`ValidatingAdmissionPolicy '${ADMISSION_POLICY_NAME}'`),
      `${what}: ${body}`,
    );
    assert.match(body, message, what);
    return true;
  });
}

fx.setup(async () => {
  ({ kc: admin, namespace } = fx);
  const adminApps = admin.makeApiClient(AppsV1Api);
  await adminApps.createNamespacedDeployment({ namespace, body: tenantWorkload() });
  await admin.makeApiClient(CoreV1Api).createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: 'app-config' }, data: { mode: 'prod' } },
  });
  const controller = await asController(admin);
  apps = controller.makeApiClient(AppsV1Api);
  core = controller.makeApiClient(CoreV1Api);
  rbac = controller.makeApiClient(RbacAuthorizationV1Api);
});

describe('the controller ServiceAccount is confined by the admission policy', () => {
  test('objects it does not own: a ServiceAccount, an unlabelled qs-* ConfigMap, a tenant ConfigMap are refused', async () => {
    const own =
      /only its own ServiceAccounts, Roles, RoleBindings, ConfigMaps and NetworkPolicies: named qs-\* and labelled queuesplit\.dev\/workload/;
    await refused(
      'create ServiceAccount miner',
      () => core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'miner' } } }),
      own,
    );
    await refused(
      'create ConfigMap qs-state-x without the label',
      () => core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'qs-state-x' } } }),
      own,
    );
    await refused(
      'delete the tenant ConfigMap app-config',
      () => core.deleteNamespacedConfigMap({ namespace, name: 'app-config' }),
      own,
    );
    // What it does own is accepted.
    await core.createNamespacedConfigMap({
      namespace,
      dryRun: DRY,
      body: { metadata: { name: 'qs-state-x', labels: { [OWNED_LABEL]: 'shop' } } },
    });
  });

  test('a Role wider than named ConfigMaps and a RoleBinding to a ClusterRole are refused although RBAC would allow them', async () => {
    const labels = { [OWNED_LABEL]: 'shop' };
    await refused(
      'create a Role listing every ConfigMap',
      () =>
        rbac.createNamespacedRole({
          namespace,
          body: {
            metadata: { name: 'qs-sa-shop-x', labels },
            rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
          },
        }),
      /may grant only get, update and watch on named ConfigMaps/,
    );
    await refused(
      'bind the controller ClusterRole to a tenant ServiceAccount',
      () =>
        rbac.createNamespacedRoleBinding({
          namespace,
          body: {
            metadata: { name: 'qs-sa-shop-x', labels },
            roleRef: {
              apiGroup: 'rbac.authorization.k8s.io',
              kind: 'ClusterRole',
              name: 'queuesplit-controller',
            },
            subjects: [{ kind: 'ServiceAccount', name: 'qs-sa-shop-x', namespace }],
          },
        }),
      /may bind only its qs-\* Role to its qs-\* ServiceAccount/,
    );
    await rbac.createNamespacedRole({
      namespace,
      dryRun: DRY,
      body: {
        metadata: { name: 'qs-sa-shop-x', labels },
        // The queue-agent's own Role (it watches its desired document by name) is admitted.
        rules: agentRoleRules({ stateConfigMap: 'qs-state-x', agentStatusConfigMap: 'qs-status-x' }),
      },
    });
  });

  test("in its own namespace: a seal reader may only get qs-seal-* ConfigMaps, and only there may it bind another namespace's queue-agent", async () => {
    const labels = { [OWNED_LABEL]: 'shop' };
    const home = testInstall.namespace;
    // Its own name: the Role in the controller's namespace outlives this test's namespace.
    const seal = `qs-seal-shop-${Date.now().toString(36)}`;
    const sealRule = (verbs: string[], names = [seal]) => [
      { apiGroups: [''], resources: ['configmaps'], resourceNames: names, verbs },
    ];
    const narrow = /in its own namespace only get on its qs-seal-\* ConfigMaps/;
    await refused(
      'a seal reader that may update the seal',
      () =>
        rbac.createNamespacedRole({
          namespace: home,
          body: { metadata: { name: seal, labels }, rules: sealRule(['get', 'update']) },
        }),
      narrow,
    );
    await refused(
      'a seal reader for the install-id ConfigMap',
      () =>
        rbac.createNamespacedRole({
          namespace: home,
          body: {
            metadata: { name: seal, labels },
            rules: sealRule(['get'], ['queuesplit-install']),
          },
        }),
      narrow,
    );
    await rbac.createNamespacedRole({
      namespace: home,
      dryRun: DRY,
      body: { metadata: { name: seal, labels }, rules: sealRule(['get']) },
    });
    // RBAC looks the Role up before admission runs: it exists (made by the admin) in both.
    const adminRbac = admin.makeApiClient(RbacAuthorizationV1Api);
    for (const ns of [namespace, home])
      await adminRbac.createNamespacedRole({
        namespace: ns,
        body: { metadata: { name: seal, labels }, rules: sealRule(['get']) },
      });
    await refused(
      'in a tenant namespace, a binding of another namespace’s ServiceAccount',
      () =>
        rbac.createNamespacedRoleBinding({
          namespace,
          body: {
            metadata: { name: seal, labels },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: seal },
            subjects: [{ kind: 'ServiceAccount', name: 'qs-sa-shop-x', namespace: 'kube-system' }],
          },
        }),
      /may bind only its qs-\* Role to its qs-\* ServiceAccount/,
    );
    await rbac.createNamespacedRoleBinding({
      namespace: home,
      dryRun: DRY,
      body: {
        metadata: { name: seal, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: seal },
        subjects: [{ kind: 'ServiceAccount', name: 'qs-sa-shop-x', namespace }],
      },
    });
    await adminRbac.deleteNamespacedRole({ namespace: home, name: seal });
  });

  test("NetworkPolicies: only ingress of its queue-agents' pods, never the tenant's", async () => {
    const networking = (await asController(admin)).makeApiClient(NetworkingV1Api);
    const labels = { [OWNED_LABEL]: 'shop' };
    const policy = (matchLabels: Record<string, string>, policyTypes = ['Ingress']) => ({
      metadata: { name: 'qs-agent-shop-x', labels },
      spec: { podSelector: { matchLabels }, policyTypes, ingress: [] },
    });
    const narrow = /may only restrict ingress to one of its queue-agents' pods/;
    await refused(
      "a policy that selects the tenant's app",
      () => networking.createNamespacedNetworkPolicy({ namespace, body: policy({ app: 'shop' }) }),
      narrow,
    );
    await refused(
      "a policy that cuts the agent's egress",
      () =>
        networking.createNamespacedNetworkPolicy({
          namespace,
          body: policy({ 'queuesplit.dev/agent': 'qs-agent-shop-x' }, ['Ingress', 'Egress']),
        }),
      narrow,
    );
    await networking.createNamespacedNetworkPolicy({
      namespace,
      dryRun: DRY,
      body: policy({ 'queuesplit.dev/agent': 'qs-agent-shop-x' }),
    });
  });

  test('Deployments: only its queue-agent, only with the installed image and its qs-sa-* ServiceAccount', async () => {
    await refused(
      'create Deployment miner',
      () =>
        apps.createNamespacedDeployment({
          namespace,
          body: { ...tenantWorkload(), metadata: { name: 'miner' } },
        }),
      /may create and delete only its queue-agent Deployments/,
    );
    await refused(
      'create the queue-agent with another image',
      () => apps.createNamespacedDeployment({ namespace, body: agentDeployment('registry.example/miner:1') }),
      new RegExp(`only the agent image the controller was installed with \\(${testInstall.image}\\)`),
    );
    await refused(
      'create the queue-agent as the tenant default ServiceAccount',
      () =>
        apps.createNamespacedDeployment({ namespace, body: agentDeployment(testInstall.image, 'default') }),
      /as its qs-sa-\* ServiceAccount/,
    );
    await refused(
      'delete the tenant workload',
      () => apps.deleteNamespacedDeployment({ namespace, name: 'shop' }),
      /may create and delete only its queue-agent Deployments/,
    );
    await apps.createNamespacedDeployment({
      namespace,
      dryRun: DRY,
      body: agentDeployment(testInstall.image),
    });
  });

  test('a workload it does not own: only the cutover fields change', async () => {
    const cutover = /may change only the cutover fields/;
    const edit = async (what: string, change: (d: V1Deployment) => void) => {
      const d = await apps.readNamespacedDeployment({ namespace, name: 'shop' });
      change(d);
      return () => apps.replaceNamespacedDeployment({ namespace, name: 'shop', body: d, dryRun: DRY });
    };
    const container = (d: V1Deployment) => d.spec!.template.spec!.containers[0]!;
    for (const [what, change] of [
      ['the image', (d) => (container(d).image = 'registry.example/miner:1')],
      ['the ServiceAccount', (d) => (d.spec!.template.spec!.serviceAccountName = 'admin')],
      [
        'a Secret volume',
        (d) => (d.spec!.template.spec!.volumes = [{ name: 's', secret: { secretName: 'rabbit' } }]),
      ],
      ['a new env entry', (d) => container(d).env!.push({ name: 'EXTRA', value: 'x' })],
      [
        'where a Secret-backed env entry comes from',
        (d) => (container(d).env![1]!.valueFrom = { secretKeyRef: { name: 'admin-creds', key: 'url' } }),
      ],
      ['the command', (d) => (container(d).command = ['sh', '-c', 'curl evil'])],
      [
        'the whole-queue opt-in only the owner may set',
        (d) =>
          (d.metadata!.annotations = {
            ...d.metadata!.annotations,
            'queuesplit.dev/allow-whole-queue': 'true',
          }),
      ],
      ['a label', (d) => (d.metadata!.labels = { ...d.metadata!.labels, tier: 'x' })],
    ] as [string, (d: V1Deployment) => void][])
      await refused(`change ${what}`, await edit(what, change), cutover);

    // The cutover itself: an env value, the recorded original, the override generation and the
    // handback finalizer (agent/controller/workloads.ts setOverrides/addFinalizer), and scaling.
    const accepted = await edit('cutover', (d) => {
      container(d).env![0]!.value = 'qs-rapp-orders-x';
      d.metadata!.annotations = {
        ...d.metadata!.annotations,
        'queuesplit.dev/original-env': JSON.stringify({ 'app/ORDERS_QUEUE': 'orders' }),
        'queuesplit.dev/split-status': '{"phase":"Splitting"}',
      };
      d.metadata!.finalizers = ['queuesplit.dev/handback'];
      d.spec!.template.metadata!.annotations = { 'queuesplit.dev/override-generation': '1' };
    });
    await accepted();
    await apps.replaceNamespacedDeploymentScale({
      namespace,
      name: 'shop',
      dryRun: DRY,
      body: { metadata: { name: 'shop', namespace }, spec: { replicas: 0 } },
    });
  });
});
