// The install manifests, as objects: one source for deploy/install/*.yaml (rendered by
// `npm run deploy:manifests`), the tests that install the controller on the local cluster, and
// the extension's "Install Controller into Cluster" command.
import { QUEUE_SPLIT_GROUP, QUEUE_SPLIT_PLURAL } from '../core/crd/queueSplitSchema';
import {
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  agentProbes,
  CONTROLLER_HEALTH_PORT,
  restrictedNamespaceLabels,
} from '../core/podSecurity';
import { defaultAgentImage, imageDigest } from '../core/image';
import { ADMINS_GROUP, OWNER_POLICY } from '../core/identity';
import { controllerAdmissionPolicy } from './admissionPolicy';

export interface InstallOptions {
  namespace: string;
  /** Controller and queue-agent image, kept as given (a digest stays: core/image.ts). */
  image: string;
  /**
   * Image of the queue-agents (default: `image`). The admission policy lets the controller run
   * this image and no other (deploy/admissionPolicy.ts).
   */
  agentImage?: string;
  replicas: number;
  /**
   * A namespaced install: the controller serves only these namespaces (they must exist), its
   * workload permissions are RoleBindings there (and in its own namespace) instead of a
   * ClusterRoleBinding. Undefined: every namespace.
   */
  watchNamespaces?: string[];
  /** Extra controller flags (tests shorten timeouts and let agents pick free ports). */
  extraArgs: string[];
  /** Pod template annotations (tests roll the controller when its bundle changes). */
  podAnnotations?: Record<string, string>;
  /** The controller container's requests and limits (default: defaultControllerResources). */
  resources?: ContainerResources;
  /**
   * The two ValidatingAdmissionPolicies (split ownership, controller confinement); default on.
   * Off only for a cluster without admissionregistration.k8s.io/v1 policies (Kubernetes < 1.30):
   * then any developer with the role may change or delete anybody's split, and the controller is
   * confined by RBAC alone (deploy/helm/queue-split/README.md).
   */
  admissionPolicies?: boolean;
  /**
   * A Service on the controller's health port (which also serves /metrics) and a Prometheus
   * operator ServiceMonitor scraping it; `labels` go on the ServiceMonitor, for a Prometheus
   * whose serviceMonitorSelector wants them. Undefined: neither.
   */
  serviceMonitor?: { labels?: Record<string, string> };
}

export interface ContainerResources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export const defaultControllerResources: ContainerResources = {
  requests: { cpu: '50m', memory: '128Mi' },
  limits: { cpu: '1', memory: '512Mi' },
};

export const defaultInstall: InstallOptions = {
  namespace: 'queuesplit-system',
  image: defaultAgentImage,
  replicas: 2,
  extraArgs: [],
};

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
} & Record<string, unknown>;

const labels = { 'app.kubernetes.io/name': 'queue-split', 'app.kubernetes.io/component': 'controller' };
/** Selects the controller's pods. */
export const CONTROLLER_SELECTOR = Object.entries(labels)
  .map(([k, v]) => `${k}=${v}`)
  .join(',');

/**
 * What cutover needs in the workloads' namespaces, and nothing more: each verb is one the code in
 * agent/controller calls (test/unit/deploy/controllerRbac.test.ts lists the call sites).
 * QueueSplits, the controller's ConfigMaps and the workloads are cached (list + watch);
 * everything else is read when a pass needs it. Nothing reads a Secret;
 * StatefulSets are changed, never created or deleted. What it may create is further confined by
 * the admission policy below (README "Install").
 */
export const controllerRules = [
  { apiGroups: [QUEUE_SPLIT_GROUP], resources: [QUEUE_SPLIT_PLURAL], verbs: ['list', 'watch', 'patch'] },
  { apiGroups: [QUEUE_SPLIT_GROUP], resources: [`${QUEUE_SPLIT_PLURAL}/status`], verbs: ['patch'] },
  // Workloads: cached (list + watch: a pass starts from memory, a change such as an env
  // override reverted wakes it), read fresh (get), finalizer/env override (update), status
  // annotation (patch); the queue-agent Deployment is created, updated, deleted.
  {
    apiGroups: ['apps'],
    resources: ['deployments'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
  { apiGroups: ['apps'], resources: ['deployments/scale', 'statefulsets/scale'], verbs: ['update'] },
  // Only to stop the pods of a Deployment being deleted, whose own controller no longer scales it.
  { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['list'] },
  { apiGroups: ['apps'], resources: ['replicasets/scale'], verbs: ['update'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
  // State, status, cleanup and seal ConfigMaps; the state and agent status ones are cached
  // (list + watch by label). get and update are also what the queue-agent's Role grants, which
  // RBAC lets the controller create only while it holds them itself.
  {
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
  },
  { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['create', 'delete'] },
  {
    apiGroups: ['rbac.authorization.k8s.io'],
    resources: ['roles', 'rolebindings'],
    verbs: ['create', 'delete'],
  },
  // The queue-agent's NetworkPolicy (agent/controller/agentNetworkPolicy.ts).
  {
    apiGroups: ['networking.k8s.io'],
    resources: ['networkpolicies'],
    verbs: ['get', 'create', 'update', 'delete'],
  },
  // A split of an autoscaled workload, and one a disruption budget forbids (agent/controller/autoscalers.ts, disruptionBudgets.ts).
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: ['list'] },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['list'] },
  // KEDA ScaledObjects are paused through KEDA's annotation for a split (agent/controller/keda.ts).
  { apiGroups: ['keda.sh'], resources: ['scaledobjects'], verbs: ['list', 'patch'] },
  // list: the kubelet's Warning events on a queue-agent pod name why it cannot start.
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'list'] },
  // Only to tell a namespace being deleted, where no handback can finish (README).
  { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
];

/** In the controller's own namespace only: the leader Lease and the ownership Leases. */
export const controllerNamespaceRules = [
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
  },
];

/**
 * What one developer session needs, verb by verb (README "The developer role"), and nothing
 * that scales, edits a workload or reads a Secret. RBAC cannot say "only your own" QueueSplits:
 * the `queuesplit-owner` admission policy below does (update/delete by the owner only).
 */
export const developerRules = [
  {
    apiGroups: [QUEUE_SPLIT_GROUP],
    resources: [QUEUE_SPLIT_PLURAL],
    verbs: ['create', 'get', 'list', 'watch', 'delete', 'patch', 'update'],
  },
  { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: ['get', 'list', 'watch'] },
  // Who am I (the owner of my splits), and may I (the access preflight before a split exists,
  // core/accessPreflight.ts). Also in
  // system:basic-user; listed so the role is complete where that binding was trimmed.
  {
    apiGroups: ['authentication.k8s.io'],
    resources: ['selfsubjectreviews'],
    verbs: ['create'],
  },
  {
    apiGroups: ['authorization.k8s.io'],
    resources: ['selfsubjectaccessreviews'],
    verbs: ['create'],
  },
  // http and relay get their messages from the queue-agent through a port-forward to its pod
  // (core/sessionStream.ts); `list` pods finds it. RBAC cannot narrow this to queue-agent pods
  // by label: a namespace's pods are all forwardable (README says so).
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
  // `create` for SPDY clients (kubectl); `get` too: the API server (≤ 1.34) authorizes a
  // WebSocket upgrade, which @kubernetes/client-node uses, as `get pods/portforward`.
  { apiGroups: [''], resources: ['pods/portforward'], verbs: ['get', 'create'] },
];

/** Annotations on the controller Deployment that say which image was installed, and its digest. */
export const AGENT_IMAGE_ANNOTATION = 'queuesplit.dev/agent-image';
export const AGENT_IMAGE_DIGEST_ANNOTATION = 'queuesplit.dev/agent-image-digest';

/**
 * Admission (CEL, admissionregistration.k8s.io/v1) that makes a QueueSplit its creator's:
 * on create spec.owner must be the caller's user name; update and delete are the owner's.
 * Exempt: members of queuesplit:admins and system:masters (may act for anybody), the
 * controller's ServiceAccount on update (finalizers; status is a subresource and not matched),
 * and Kubernetes' own controllers in kube-system (namespace deletion, garbage collection).
 * Its own objects, apart from the controller's RBAC (README "Who owns a split").
 */
export function ownerPolicyManifests(namespace: string): Manifest[] {
  const controller = `system:serviceaccount:${namespace}:queuesplit-controller`;
  const policyLabels = { ...labels, 'app.kubernetes.io/component': 'split-ownership' };
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: OWNER_POLICY, labels: policyLabels },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [QUEUE_SPLIT_GROUP],
              apiVersions: ['*'],
              operations: ['CREATE', 'UPDATE', 'DELETE'],
              resources: [QUEUE_SPLIT_PLURAL],
            },
          ],
        },
        variables: [
          { name: 'user', expression: 'request.userInfo.username' },
          {
            name: 'admin',
            expression: `request.userInfo.groups.exists(g, g == '${ADMINS_GROUP}' || g == 'system:masters')`,
          },
          {
            name: 'platform',
            expression:
              "request.userInfo.username.startsWith('system:serviceaccount:kube-system:') || request.userInfo.username == 'system:kube-controller-manager'",
          },
        ],
        validations: [
          {
            expression: `request.operation != 'CREATE' || variables.admin || object.spec.owner == variables.user`,
            messageExpression: `'${OWNER_POLICY}: a QueueSplit is created for its creator: spec.owner must be your Kubernetes user name "' + variables.user + '", not "' + object.spec.owner + '". Leave the owner to Queue Split (the extension and sidecar set it), or ask a member of ${ADMINS_GROUP}.'`,
            reason: 'Forbidden',
          },
          {
            expression: `request.operation == 'CREATE' || variables.admin || variables.platform || oldObject.spec.owner == variables.user || (request.operation == 'UPDATE' && variables.user == '${controller}')`,
            messageExpression: `'${OWNER_POLICY}: only the owner "' + oldObject.spec.owner + '" (or a member of ${ADMINS_GROUP}) may ' + (request.operation == 'DELETE' ? 'delete' : 'update') + ' this QueueSplit; you are "' + variables.user + '". Ask its owner to stop it.'`,
            reason: 'Forbidden',
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: OWNER_POLICY, labels: policyLabels },
      spec: { policyName: OWNER_POLICY, validationActions: ['Deny'] },
    },
  ];
}

export function controllerManifests(options: InstallOptions = defaultInstall): Manifest[] {
  const { namespace } = options;
  const digest = imageDigest(options.image);
  const imageAnnotations = {
    [AGENT_IMAGE_ANNOTATION]: options.image,
    ...(digest !== undefined ? { [AGENT_IMAGE_DIGEST_ANNOTATION]: digest } : {}),
  };
  const agentImage = options.agentImage ?? options.image;
  return [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      // The controller's pods meet PodSecurity `restricted`; the namespace enforces it.
      metadata: { name: namespace, labels: { ...labels, ...restrictedNamespaceLabels } },
    },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'queuesplit-controller', namespace, labels },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'queuesplit-controller', labels },
      rules: controllerRules,
    },
    ...workloadBindings(options),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'queuesplit-controller', namespace, labels },
      rules: controllerNamespaceRules,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'queuesplit-controller', namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'queuesplit-controller' },
      subjects: [{ kind: 'ServiceAccount', name: 'queuesplit-controller', namespace }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: {
        name: 'queuesplit-developer',
        labels: { ...labels, 'app.kubernetes.io/component': 'developer-access' },
      },
      rules: developerRules,
    },
    // Before the controller runs: it never acts unconfined (deploy/admissionPolicy.ts).
    ...(options.admissionPolicies === false
      ? []
      : [
          ...ownerPolicyManifests(namespace),
          ...controllerAdmissionPolicy({ namespace, image: agentImage, labels }),
        ]),
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'queuesplit-controller', namespace, labels, annotations: imageAnnotations },
      spec: {
        replicas: options.replicas,
        // Recreate: in a rolling update the old ReplicaSet's standby could take the lease from
        // the old leader stopped first and act with the old settings after the upgrade began
        // (e.g. roll the queue-agents back to the old image). A few seconds without a
        // controller cost nothing: the queue-agents go on copying.
        strategy: { type: 'Recreate' },
        selector: { matchLabels: labels },
        template: {
          metadata: { labels, ...(options.podAnnotations ? { annotations: options.podAnnotations } : {}) },
          spec: {
            serviceAccountName: 'queuesplit-controller',
            terminationGracePeriodSeconds: 30,
            securityContext: restrictedPodSecurityContext,
            containers: [
              {
                name: 'controller',
                image: options.image,
                args: [
                  'controller',
                  `--namespace=${namespace}`,
                  `--agent-image=${agentImage}`,
                  ...(options.watchNamespaces
                    ? [`--watch-namespaces=${options.watchNamespaces.join(',')}`]
                    : []),
                  ...options.extraArgs,
                ],
                env: [
                  { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                ],
                ports: [{ name: 'health', containerPort: CONTROLLER_HEALTH_PORT }],
                ...agentProbes(CONTROLLER_HEALTH_PORT),
                securityContext: restrictedContainerSecurityContext,
                resources: options.resources ?? defaultControllerResources,
              },
            ],
          },
        },
      },
    },
    ...(options.serviceMonitor ? metricsManifests(namespace, options.serviceMonitor.labels ?? {}) : []),
  ];
}

/**
 * The controller serves /metrics (Node.js process metrics) beside /healthz and /readyz on its
 * health port; a ServiceMonitor can only select a Service, so one comes with it. Every replica is
 * scraped: the standby's process counts too.
 */
function metricsManifests(namespace: string, monitorLabels: Record<string, string>): Manifest[] {
  const metricsLabels = { ...labels, 'app.kubernetes.io/component': 'controller-metrics' };
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'queuesplit-controller-metrics', namespace, labels: metricsLabels },
      spec: {
        selector: labels,
        ports: [{ name: 'health', port: CONTROLLER_HEALTH_PORT, targetPort: 'health' }],
      },
    },
    {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: 'queuesplit-controller', namespace, labels: { ...metricsLabels, ...monitorLabels } },
      spec: {
        selector: { matchLabels: metricsLabels },
        namespaceSelector: { matchNames: [namespace] },
        endpoints: [{ port: 'health', path: '/metrics' }],
      },
    },
  ];
}

/**
 * The controller's workload permissions (controllerRules): cluster-wide, or in a namespaced
 * install only in the watched namespaces and its own (seals, records, the install id).
 */
function workloadBindings(options: InstallOptions): Manifest[] {
  const { namespace } = options;
  const roleRef = {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    name: 'queuesplit-controller',
  };
  const subjects = [{ kind: 'ServiceAccount', name: 'queuesplit-controller', namespace }];
  if (!options.watchNamespaces)
    return [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'queuesplit-controller', labels },
        roleRef,
        subjects,
      },
    ];
  return [...new Set([...options.watchNamespaces, namespace])].map((bound) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'queuesplit-controller-workloads', namespace: bound, labels },
    roleRef,
    subjects,
  }));
}

/** Grants a developer (user or group) the split role in one namespace. */
export function developerBinding(
  namespace: string,
  subject: { kind: 'User' | 'Group' | 'ServiceAccount'; name: string; namespace?: string },
): Manifest {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `queuesplit-developer-${subject.name}`.slice(0, 63), namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'queuesplit-developer' },
    subjects: [
      subject.kind === 'ServiceAccount' ? subject : { apiGroup: 'rbac.authorization.k8s.io', ...subject },
    ],
  };
}
