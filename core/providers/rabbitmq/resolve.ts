// A RabbitMQ queue resolved against the pod template (docs/design.md §3, workload stage): the
// literal queue the controller overrides, and the connection env the queue-agent copies.
import { copied, dedupe, literalOf } from '../../queueConfig/envResolution';
import { plainHttpManagement, plainHttpManagementError } from './managementTransport';
import type { ResolveContext } from '../../queueConfig/resolveContext';
import type { CopiedEnv, ResolvedQueueBase } from '../../queueConfig/resolvedTypes';
import { literalSetting } from '../../queueConfig/settingResolution';
import { describeSetting, settingField } from '../../queueConfig/settingRef';
import { checkTlsSecret } from '../../queueConfig/tlsSecret';
import { fieldError } from '../../result';
import type { RabbitBlock } from './declaration';

/** The roles of a RabbitMQ connection's env vars. */
export const RABBIT_ENV_ROLES = {
  url: { address: 'url' },
  managementUrl: { address: 'url' },
  username: {},
  password: { secret: true },
} as const;
export type RabbitRole = keyof typeof RABBIT_ENV_ROLES;

export interface ResolvedRabbitQueue extends ResolvedQueueBase<RabbitRole> {
  provider: 'rabbitmq';
  /** The declaration accepts plain http management next to TLS AMQP (./managementTransport.ts). */
  allowPlainHttpManagement?: true;
}

export function resolveRabbit(
  name: string,
  block: RabbitBlock,
  ctx: ResolveContext,
): ResolvedRabbitQueue | undefined {
  const base = `${ctx.path}.rabbitmq`;
  const sourceFields = { env: 'sourceEnv', file: 'sourceFile' };
  const resolved = literalSetting(block.sourceEnv, block.sourceFile, sourceFields, base, 'queue', ctx);
  const source = resolved?.value;
  if (resolved && source !== undefined && (Buffer.byteLength(source) > 255 || source.startsWith('amq.'))) {
    ctx.errors.push(
      fieldError(
        `${base}.${settingField(resolved.at, sourceFields)}`,
        `${describeSetting(resolved.at)} is "${source}", which is not a usable RabbitMQ queue name.`,
        'Use a queue name of at most 255 bytes that does not start with "amq.".',
      ),
    );
  }
  const env = [
    ...copied(block.urlEnv, 'url', `${base}.urlEnv`, ctx),
    ...copied(block.managementUrlEnv, 'managementUrl', `${base}.managementUrlEnv`, ctx),
    ...(block.usernameEnv ? copied(block.usernameEnv, 'username', `${base}.usernameEnv`, ctx) : []),
    ...(block.passwordEnv ? copied(block.passwordEnv, 'password', `${base}.passwordEnv`, ctx) : []),
  ];
  checkLiteralUrl(env, block.urlEnv, ['amqp:', 'amqps:'], `${base}.urlEnv`, ctx, block.tls !== undefined);
  checkLiteralUrl(env, block.managementUrlEnv, ['http:', 'https:'], `${base}.managementUrlEnv`, ctx, false);
  checkTlsSecret(block.tls, `${base}.tls.caSecret`, ctx);
  if (
    !block.allowPlainHttpManagement &&
    plainHttpManagement({
      amqpUrl: literalOf(env, block.urlEnv),
      managementUrl: literalOf(env, block.managementUrlEnv),
      tls: block.tls !== undefined,
    })
  ) {
    ctx.errors.push(plainHttpManagementError(base, block.urlEnv, block.managementUrlEnv));
  }
  if (resolved === undefined) return undefined;
  return {
    provider: 'rabbitmq',
    name,
    container: ctx.env.container.name,
    sourceAt: resolved.at,
    source: resolved.value,
    env: dedupe(env),
    ...(block.tls ? { tls: block.tls } : {}),
    ...(block.allowPlainHttpManagement ? { allowPlainHttpManagement: true as const } : {}),
  };
}

/** A literal URL must have one of `schemes` (amqps: when the queue declares tls). */
function checkLiteralUrl(
  env: readonly CopiedEnv<string>[],
  name: string,
  schemes: readonly string[],
  path: string,
  ctx: ResolveContext,
  tlsRequired: boolean,
): void {
  const value = literalOf(env, name);
  if (value === undefined) return;
  let protocol: string;
  try {
    protocol = new URL(value).protocol;
  } catch {
    ctx.errors.push(fieldError(path, `${name} is not a URL.`, `Set it to a ${schemes.join(' or ')}// URL.`));
    return;
  }
  if (!schemes.includes(protocol)) {
    ctx.errors.push(
      fieldError(path, `${name} has scheme "${protocol}".`, `Use a ${schemes.join(' or ')}// URL.`),
    );
  } else if (tlsRequired && protocol !== 'amqps:') {
    ctx.errors.push(
      fieldError(
        path,
        `${name} is a plain amqp: URL, but the queue declares tls.`,
        'Use an amqps:// URL, or remove the tls block.',
      ),
    );
  }
}
