// The parts of a Kubernetes workload the workload stage reads, as minimal structural types.
// Objects from @kubernetes/client-node (V1Deployment, V1PodTemplateSpec, …) and plain JSON from
// the API server are both assignable, so core/ needs no Kubernetes client.

export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface EnvVarSource {
  secretKeyRef?: KeySelector;
  configMapKeyRef?: KeySelector;
  /** Read only to reject it: it would resolve against the queue-agent's pod. */
  fieldRef?: unknown;
  /** Read only to reject it, for the same reason. */
  resourceFieldRef?: unknown;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: EnvVarSource;
}

export interface EnvFromSource {
  prefix?: string;
  secretRef?: { name?: string; optional?: boolean };
  configMapRef?: { name?: string; optional?: boolean };
}

export interface VolumeMount {
  name: string;
  mountPath?: string;
  subPath?: string;
  /** Read only to reject it: the file it names depends on the pod. */
  subPathExpr?: string;
}

export interface Container {
  name: string;
  env?: readonly EnvVar[];
  envFrom?: readonly EnvFromSource[];
  volumeMounts?: readonly VolumeMount[];
}

export interface Volume {
  name: string;
  configMap?: { name?: string; items?: readonly { key: string; path: string }[]; optional?: boolean };
  secret?: { secretName?: string };
  projected?: { sources?: readonly { secret?: { name?: string } }[] };
}

export interface PodSpec {
  containers: readonly Container[];
  volumes?: readonly Volume[];
}

export interface PodTemplateSpec {
  metadata?: { labels?: Readonly<Record<string, string>>; annotations?: Readonly<Record<string, string>> };
  spec?: PodSpec;
}

/** A Deployment or StatefulSet (anything else is refused by the workload stage). */
export interface WorkloadLike {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    annotations?: Readonly<Record<string, string>>;
  };
  spec?: { replicas?: number; template?: PodTemplateSpec };
}
