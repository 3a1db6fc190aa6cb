// The Kubernetes side of the extension, loaded on first use with `import('./kube')` so that
// @kubernetes/client-node is not evaluated while VS Code activates the extension.
export { ClusterApi, newQueueSplit, type Probe } from './cluster';
export { connect, kubeconfigFile, listContexts, type ContextInfo, type KubeConnection } from './connection';
export { KubeProblem } from './errors';
export { NamespaceWatch, type NamespaceState } from './watch';
export { installObjects } from './install';
export { sessionPreflight } from './accessPreflight';
export { listEventsOf, type EventSubject } from './events';
