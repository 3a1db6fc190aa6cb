// Schema stage (docs/design.md §3): the annotation alone, without the workload. Each queue entry is
// checked against the schema of the provider it declares, so a mistake in a Kafka block is
// reported in Kafka terms instead of as "matches neither of two unions".
import { PROVIDER_NAMES } from '../providers';
import { z } from 'zod';
import { joinPath } from '../fieldPath';
import { fail, fieldError, guarded, ok, type FieldError, type Result } from '../result';
import { closestMatch } from '../suggest';
import { issuesToFieldErrors } from '../zodIssues';
import { parseYamlSafely } from './safeYaml';
import {
  MAX_QUEUES,
  PATTERNS,
  queueConfigSchema,
  queueSchemaOf,
  type QueueConfig,
  type QueueDeclaration,
} from './schema';
import { crossQueueErrors } from './schemaRules';

const PATTERN_HINTS = Object.values(PATTERNS);
const EXAMPLE =
  'queues:\n  - name: orders\n    kafka: {brokersEnv: KAFKA_BROKERS, sourceEnv: ORDERS_TOPIC, groupEnv: KAFKA_GROUP, offsetReset: earliest}';

/** The annotation's YAML text → a validated declaration, or every problem found. Never throws. */
export function parseQueueConfig(annotation: unknown): Result<QueueConfig> {
  return guarded('', () => {
    const parsed = parseYamlSafely(annotation);
    if (!parsed.ok) return parsed;
    return validateQueueConfig(parsed.value);
  });
}

/** The schema stage on an already parsed value (e.g. from JSON). Never throws. */
export function validateQueueConfig(value: unknown): Result<QueueConfig> {
  return guarded('', () => validateValue(value));
}

function validateValue(value: unknown): Result<QueueConfig> {
  if (value === null || value === undefined || value === '') {
    return fail([fieldError('', 'is empty.', `Declare the queues the workload consumes, e.g.\n${EXAMPLE}`)]);
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    return fail([
      fieldError(
        '',
        'must be a map with a queues list.',
        `Start the annotation with queues:, e.g.\n${EXAMPLE}`,
      ),
    ]);
  }
  const top = z.strictObject({ queues: z.array(z.unknown()).min(1).max(MAX_QUEUES) }).safeParse(value);
  if (!top.success) return fail(issuesToFieldErrors(top.error.issues, queueConfigSchema, value));
  const errors: FieldError[] = [];
  const queues: QueueDeclaration[] = [];
  top.data.queues.forEach((item, index) => {
    const result = validateQueue(item, joinPath('queues', index));
    if (result.ok) queues.push(result.value);
    else errors.push(...result.errors);
  });
  if (errors.length > 0) return fail(errors);
  const crossErrors = crossQueueErrors(queues);
  return crossErrors.length > 0 ? fail(crossErrors) : ok({ queues });
}

/** "kafka or rabbitmq", "kafka, rabbitmq or sqs". */
function eitherOf(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

function validateQueue(item: unknown, path: string): Result<QueueDeclaration> {
  const blocks = eitherOf(PROVIDER_NAMES);
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return fail([
      fieldError(path, `must be a map with name and a ${blocks} block.`, `Write it like\n${EXAMPLE}`),
    ]);
  }
  const declared = PROVIDER_NAMES.filter((provider) => Object.hasOwn(item, provider));
  const [provider, second] = declared;
  if (second !== undefined) {
    return fail([
      fieldError(
        path,
        `has both a ${provider} and a ${second} block; a queue lives on exactly one broker.`,
        'Keep the block of the broker this queue is on; declare the other as its own entry.',
      ),
    ]);
  }
  if (provider === undefined) {
    const guess = Object.keys(item)
      .map((key) => closestMatch(key, PROVIDER_NAMES))
      .find((match) => match !== undefined);
    return fail([
      fieldError(
        path,
        `has no provider block: it needs exactly one of ${blocks}.`,
        guess
          ? `Did you mean ${guess}?`
          : `Add a ${eitherOf(PROVIDER_NAMES.map((name) => `${name}:`))} block describing how the container reaches the broker.`,
      ),
    ]);
  }
  const schema = queueSchemaOf(provider);
  const result = schema.safeParse(item);
  if (result.success) return ok(result.data);
  return fail(issuesToFieldErrors(result.error.issues, schema, item, path, PATTERN_HINTS));
}
