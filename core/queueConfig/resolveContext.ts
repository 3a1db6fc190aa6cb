// What the per-queue resolution steps share: the container's env, the pod template, the queue's
// path in the annotation, and the error list they all append to.
import type { FieldError } from '../result';
import type { ContainerEnv } from './containerEnv';
import type { PodTemplateSpec } from './podTemplate';

export interface ResolveContext {
  env: ContainerEnv;
  template: PodTemplateSpec | undefined;
  path: string;
  errors: FieldError[];
}
