// The QueueSplit CustomResourceDefinition (apiextensions.k8s.io/v1), built from the zod schema
// so the types the code uses and the schema the API server enforces cannot drift apart.
import { stringify } from 'yaml';
import { z } from 'zod';
import {
  QUEUE_SPLIT_GROUP,
  QUEUE_SPLIT_KIND,
  QUEUE_SPLIT_PLURAL,
  QUEUE_SPLIT_SHORT_NAME,
  QUEUE_SPLIT_SINGULAR,
  QUEUE_SPLIT_VERSION,
  queueSplitSpecSchema,
  queueSplitStatusSchema,
} from './queueSplitSchema';
import { toStructuralSchema, type JsonSchema } from './structuralSchema';

function openApi(schema: z.ZodType): JsonSchema {
  return toStructuralSchema(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' }) as JsonSchema);
}

const column = (name: string, jsonPath: string, description: string, type = 'string') => ({
  name,
  type,
  jsonPath,
  description,
});

export function queueSplitCrd(): JsonSchema {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${QUEUE_SPLIT_PLURAL}.${QUEUE_SPLIT_GROUP}`,
      labels: { 'app.kubernetes.io/part-of': 'queue-split' },
    },
    spec: {
      group: QUEUE_SPLIT_GROUP,
      scope: 'Namespaced',
      names: {
        kind: QUEUE_SPLIT_KIND,
        listKind: `${QUEUE_SPLIT_KIND}List`,
        plural: QUEUE_SPLIT_PLURAL,
        singular: QUEUE_SPLIT_SINGULAR,
        shortNames: [QUEUE_SPLIT_SHORT_NAME],
        categories: ['queuesplit'],
      },
      versions: [
        {
          name: QUEUE_SPLIT_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            column('Workload', '.spec.workload.name', 'The split workload.'),
            column('Queues', '.spec.queues', 'Logical queues split.'),
            column('Filter', '.spec.filter', 'Header filter (AND of key=value).'),
            column('Match', '.spec.match.anyOf', 'Filter beyond equality (anyOf clauses of predicates).'),
            column('Owner', '.spec.owner', 'Who the split is for.'),
            column(
              'Phase',
              '.status.phase',
              'Pending, Preparing, Active, Draining, Rejected, Degraded, Failed, Stopped.',
            ),
            column('Age', '.metadata.creationTimestamp', 'Time since creation.', 'date'),
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description:
                "A developer's personal, header-filtered split of queues consumed by a Deployment or StatefulSet.",
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: openApi(queueSplitSpecSchema),
                status: openApi(queueSplitStatusSchema),
              },
            },
          },
        },
      ],
    },
  };
}

export const GENERATED_HEADER =
  '# Generated from core/crd/queueSplitSchema.ts by `npx tsx core/generate.ts`. Do not edit.\n';

export function renderQueueSplitCrdYaml(): string {
  return GENERATED_HEADER + stringify(queueSplitCrd(), { lineWidth: 0 });
}
