// The annotation's JSON Schema, generated from the zod schema (docs, editor completion).
import { z } from 'zod';
import { queueConfigSchema } from './schema';

export const QUEUE_CONFIG_SCHEMA_ID = 'https://queuesplit.dev/schema/queue-config.schema.json';

export function queueConfigJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(queueConfigSchema, { target: 'draft-2020-12', io: 'input' });
  return { ...generated, $id: QUEUE_CONFIG_SCHEMA_ID, title: 'Queue Split queue declaration' };
}
