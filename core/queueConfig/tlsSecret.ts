// A declaration's `tls.caSecret` must be a Secret the container already uses (its env or a
// mounted volume): the queue-agent may only use Secrets the workload already uses.
import { fieldError } from '../result';
import type { TlsBlock } from './blocks';
import type { Container, PodTemplateSpec } from './podTemplate';
import type { ResolveContext } from './resolveContext';

export function checkTlsSecret(tls: TlsBlock | undefined, path: string, ctx: ResolveContext): void {
  const secret = tls?.caSecret;
  if (secret === undefined) return;
  if (ctx.env.usesSecret(secret) || mountsSecret(ctx.env.container, ctx.template, secret)) return;
  ctx.errors.push(
    fieldError(
      path,
      `Secret "${secret}" is not used by container "${ctx.env.container.name}" (neither its env nor a mounted volume); the queue-agent may only use Secrets the workload already uses.`,
      `Reference it from the container (e.g. mount it as a volume), or name a Secret it already uses.`,
    ),
  );
}

function mountsSecret(container: Container, template: PodTemplateSpec | undefined, secret: string): boolean {
  const mounted = new Set((container.volumeMounts ?? []).map((m) => m.name));
  return (template?.spec?.volumes ?? []).some(
    (volume) =>
      mounted.has(volume.name) &&
      (volume.secret?.secretName === secret ||
        (volume.projected?.sources ?? []).some((s) => s.secret?.name === secret)),
  );
}
