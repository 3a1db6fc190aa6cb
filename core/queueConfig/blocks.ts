// What every provider's declaration block is made of (core/providers/<provider>/declaration.ts):
// the patterns of names with the words an error uses for them, env var name fields, the settings
// that may instead live in a mounted file (`sourceFile`), and the `tls` block with its pairing rule.
import { z } from 'zod';
import { fieldError, type FieldError } from '../result';
import { CONFIG_FILE_FORMATS } from './configFile';

/** Patterns with the words an error uses for them; zod reports only the pattern that failed. */
export const PATTERNS = {
  /** Kubernetes' rule for env var names (C_IDENTIFIER plus '-' and '.'). */
  envName: {
    regex: /^[-._a-zA-Z][-._a-zA-Z0-9]*$/,
    what: 'an environment variable name',
    fix: 'Use the name of an env var of the container: letters, digits, "_", "-", "."; not starting with a digit.',
  },
  /** Logical queue names appear in labels and resource names, so they are DNS labels. */
  queueName: {
    regex: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    what: 'a logical queue name',
    fields: ['name'],
    fix: 'Use lowercase letters, digits and "-", starting and ending with a letter or digit, e.g. orders.',
  },
  containerName: {
    regex: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    what: 'a container name',
    fields: ['container'],
    fix: 'Use the name of a container in the pod template (lowercase letters, digits, "-").',
  },
  secretName: {
    regex: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
    what: 'a Secret name',
    fix: 'Use the name of a Secret in the workload namespace (lowercase letters, digits, "-", ".").',
  },
  filePath: {
    regex: /^\/[^\0]*[^/\0]$/,
    what: 'an absolute file path',
    fields: ['path'],
    fix: 'Give the path the container reads the file at, e.g. /config/application.yml.',
  },
  fileKey: {
    regex: /^(\$\.)?[^.\s]+(\.[^.\s]+)*$/,
    what: 'a key path',
    fields: ['key'],
    fix: 'Give the key as dotted parts, e.g. app.orders.topic (JSON: $.app.orders.topic also works).',
  },
  secretKey: {
    regex: /^[-._a-zA-Z0-9]+$/,
    what: 'a Secret key',
    fix: 'Use a key of the Secret, e.g. ca.crt.',
  },
} as const;

type PatternName = keyof typeof PATTERNS;

export function patterned(name: PatternName, max: number, description: string) {
  return z.string().min(1).max(max).regex(PATTERNS[name].regex).describe(description);
}

/** A field naming an env var of the container. */
export const envName = (description: string) => patterned('envName', 253, description);

/** A setting the container reads from a file of a ConfigMap volume instead of an env var. */
export const fileSettingSchema = z
  .strictObject({
    path: patterned(
      'filePath',
      4096,
      'The file as the container reads it: an absolute path under a configMap volume mount, e.g. /config/application.properties.',
    ),
    key: patterned(
      'fileKey',
      512,
      'The key in the file, dotted: app.orders.topic matches nested keys (YAML, JSON) and dotted keys (.properties, YAML) alike.',
    ),
    format: z
      .enum(CONFIG_FILE_FORMATS)
      .describe('How the file is written; by default from its extension (.properties, .yml/.yaml, .json).')
      .optional(),
  })
  .describe(
    'A key in a file the container reads from a ConfigMap volume (Spring Boot application.yml, .properties, JSON).',
  );

export type FileSettingDecl = z.infer<typeof fileSettingSchema>;

/** A setting named by exactly one of its env field and its file field; `path` is the block's. */
export function oneSettingErrors(
  env: string | undefined,
  file: FileSettingDecl | undefined,
  path: string,
  fields: { env: string; file: string },
  what: string,
): FieldError[] {
  if ((env === undefined) !== (file === undefined)) return [];
  return [
    env === undefined
      ? fieldError(
          `${path}.${fields.env}`,
          `is required: the ${what} must be named by ${fields.env} or ${fields.file}.`,
          `Give ${fields.env}: <env var> when the container reads the ${what} from its env, or ${fields.file}: {path, key} when it reads it from a mounted file.`,
        )
      : fieldError(
          `${path}.${fields.file}`,
          `is set together with ${fields.env}; the ${what} is read from one place.`,
          `Keep ${fields.env} if the container reads the ${what} from its env, else keep ${fields.file}.`,
        ),
  ];
}

export const tlsSchema = z
  .strictObject({
    caSecret: patterned(
      'secretName',
      253,
      'Secret in the workload namespace with the CA bundle. It must already be used by the container (env or mounted volume). Omit to trust the system CAs.',
    ).optional(),
    caKey: patterned('secretKey', 253, 'Key of caSecret holding the PEM CA bundle, e.g. ca.crt.').optional(),
  })
  .describe('Connect with TLS. `{}` trusts the system CAs; caSecret and caKey go together.');

export type TlsBlock = z.infer<typeof tlsSchema>;

/** caSecret and caKey go together; `path` is the tls block's. */
export function tlsPairingErrors(tls: TlsBlock | undefined, path: string): FieldError[] {
  if (!tls || (tls.caSecret === undefined) === (tls.caKey === undefined)) return [];
  const missing = tls.caSecret === undefined ? 'caSecret' : 'caKey';
  return [
    fieldError(
      `${path}.${missing}`,
      'is required when the other of caSecret/caKey is set.',
      'Give both caSecret and caKey, or neither to trust the system CAs.',
    ),
  ];
}
