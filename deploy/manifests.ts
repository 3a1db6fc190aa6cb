// The install manifests, as objects: one source for deploy/install/*.yaml (rendered by
// `npm run deploy:manifests`), the tests that install the controller on the local cluster, and
// the extension's "Install Controller into Cluster" command.
import { QUEUE_SPLIT_GROUP, QUEUE_SPLIT_PLURAL } from '../core/crd/queueSplitSchema';
import { productVersion } from '../core/version';

export interface InstallOptions {
  namespace: string;
  image: string;
  replicas: number;
  /** Extra controller flags (tests shorten timeouts and let agents pick free ports). */
  extraArgs: string[];
  /** Pod template annotations (tests roll the controller when its bundle changes). */
  podAnnotations?: Record<string, string>;
}

export const defaultInstall: InstallOptions = {
  namespace: 'queuesplit-system',
  image: `queuesplit/agent:${productVersion}`,
  replicas: 2,
  extraArgs: [],
};

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
} & Record<string, unknown>;

const labels = { 'app.kubernetes.io/name': 'queue-split', 'app.kubernetes.io/component': 'controller' };

/** What cutover needs, and nothing that reads a Secret. */
export const controllerRules = [
  {
    apiGroups: [QUEUE_SPLIT_GROUP],
    resources: [QUEUE_SPLIT_PLURAL],
    verbs: ['get', 'list', 'watch', 'update', 'patch'],
  },
  {
    apiGroups: [QUEUE_SPLIT_GROUP],
    resources: [`${QUEUE_SPLIT_PLURAL}/status`],
    verbs: ['get', 'update', 'patch'],
  },
  { apiGroups: [QUEUE_SPLIT_GROUP], resources: [`${QUEUE_SPLIT_PLURAL}/finalizers`], verbs: ['update'] },
  {
    apiGroups: ['apps'],
    resources: ['deployments', 'statefulsets'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  {
    apiGroups: ['apps'],
    resources: ['deployments/scale', 'statefulsets/scale'],
    verbs: ['get', 'update', 'patch'],
  },
  // Only to stop the pods of a Deployment being deleted, whose own controller no longer scales it.
  { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['list'] },
  { apiGroups: ['apps'], resources: ['replicasets/scale'], verbs: ['get', 'update', 'patch'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
  {
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'create', 'delete'] },
  {
    apiGroups: ['rbac.authorization.k8s.io'],
    resources: ['roles', 'rolebindings'],
    verbs: ['get', 'create', 'delete'],
  },
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: ['get', 'list'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];

/** Developers create and watch their splits and read workloads; they cannot scale or read Secrets. */
export const developerRules = [
  {
    apiGroups: [QUEUE_SPLIT_GROUP],
    resources: [QUEUE_SPLIT_PLURAL],
    verbs: ['create', 'get', 'list', 'watch', 'delete', 'patch', 'update'],
  },
  { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: ['get', 'list', 'watch'] },
];

export function controllerManifests(options: InstallOptions = defaultInstall): Manifest[] {
  const { namespace } = options;
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels } },
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
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'queuesplit-controller', labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'queuesplit-controller' },
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
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'queuesplit-controller', namespace, labels },
      spec: {
        replicas: options.replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels, ...(options.podAnnotations ? { annotations: options.podAnnotations } : {}) },
          spec: {
            serviceAccountName: 'queuesplit-controller',
            terminationGracePeriodSeconds: 30,
            containers: [
              {
                name: 'controller',
                image: options.image,
                args: [
                  'controller',
                  `--namespace=${namespace}`,
                  `--agent-image=${options.image}`,
                  ...options.extraArgs,
                ],
                env: [
                  { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                ],
                securityContext: {
                  runAsNonRoot: true,
                  readOnlyRootFilesystem: true,
                  allowPrivilegeEscalation: false,
                },
                resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } },
              },
            ],
          },
        },
      },
    },
  ];
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
