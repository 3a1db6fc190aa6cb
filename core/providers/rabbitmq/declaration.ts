// RabbitMQ's block of the `telepresence.io/queue-config` annotation (docs/design.md §3): its
// schema and the rules across its fields.
import { z } from 'zod';
import {
  envName,
  fileSettingSchema,
  oneSettingErrors,
  tlsPairingErrors,
  tlsSchema,
} from '../../queueConfig/blocks';
import { fieldError, type FieldError } from '../../result';

export const rabbitBlockSchema = z
  .strictObject({
    urlEnv: envName('Env var with the amqp:// or amqps:// URL (may carry the credentials).'),
    managementUrlEnv: envName('Env var with the management API URL (http(s)://host:15672).'),
    sourceEnv: envName(
      'Env var whose literal value is the queue the container consumes. Or sourceFile, when it reads the queue from a mounted file.',
    ).optional(),
    sourceFile: fileSettingSchema
      .describe(
        'The key of a mounted config file whose literal value is the queue the container consumes (instead of sourceEnv).',
      )
      .optional(),
    usernameEnv: envName(
      'Env var with the username, when the URL carries none. Goes with passwordEnv.',
    ).optional(),
    passwordEnv: envName(
      'Env var with the password, when the URL carries none. Goes with usernameEnv.',
    ).optional(),
    tls: tlsSchema.optional(),
    allowPlainHttpManagement: z
      .literal(true)
      .describe(
        'Accept a plain http:// management URL although AMQP uses TLS: the management credentials then cross the network unencrypted. Only for a network you trust.',
      )
      .optional(),
  })
  .describe('The queue is a RabbitMQ queue (durable classic or quorum).');

export type RabbitBlock = z.infer<typeof rabbitBlockSchema>;

/** The block's env var settings as [path below the block, env var name]. */
export function rabbitEnvSettings(r: RabbitBlock): [string, string][] {
  const settings: [string, string][] = [
    ['urlEnv', r.urlEnv],
    ['managementUrlEnv', r.managementUrlEnv],
  ];
  if (r.sourceEnv) settings.push(['sourceEnv', r.sourceEnv]);
  if (r.usernameEnv) settings.push(['usernameEnv', r.usernameEnv]);
  if (r.passwordEnv) settings.push(['passwordEnv', r.passwordEnv]);
  return settings;
}

export function rabbitBlockErrors(r: RabbitBlock, path: string): FieldError[] {
  const errors = [
    ...oneSettingErrors(r.sourceEnv, r.sourceFile, path, { env: 'sourceEnv', file: 'sourceFile' }, 'queue'),
    ...tlsPairingErrors(r.tls, `${path}.tls`),
  ];
  if ((r.usernameEnv === undefined) !== (r.passwordEnv === undefined)) {
    const missing = r.usernameEnv === undefined ? 'usernameEnv' : 'passwordEnv';
    errors.push(
      fieldError(
        `${path}.${missing}`,
        'is required when the other of usernameEnv/passwordEnv is set.',
        'Give both, or neither when the URL carries the credentials.',
      ),
    );
  }
  return errors;
}
