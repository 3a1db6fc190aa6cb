// What the per-queue resolution steps share: the container's env, the pod template, the queue's
// path in the annotation, the ConfigMaps read for file settings, and the error list they all
// append to.
import type { FieldError } from '../result';
import type { ContainerEnv } from './containerEnv';
import type { ConfigMapLookup } from './fileResolution';
import type { PodTemplateSpec } from './podTemplate';

export interface ResolveContext {
  env: ContainerEnv;
  template: PodTemplateSpec | undefined;
  path: string;
  errors: FieldError[];
  /** The ConfigMaps the caller read, for settings declared in mounted files. */
  configMaps: ConfigMapLookup | undefined;
}
