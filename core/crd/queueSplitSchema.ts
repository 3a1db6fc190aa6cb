// The QueueSplit custom resource: one developer's split of one workload's queues. This zod
// schema is the one source of its TypeScript types, of the CRD's OpenAPI schema in deploy/crd/,
// and of the validation the controller applies to objects it reads.
import { z } from 'zod';
import { MAX_FILTER_PAIRS, MAX_FILTER_VALUE_LENGTH } from '../filter';
import { anyOfSchema } from '../filter/schema';
import { ROUTE_ID_PATTERN } from '../names';
import { PATTERNS } from '../queueConfig/schema';
import { PUBLIC_KEY_PATTERN, SECRET_HASH_PATTERN } from '../sessionSecret';
import { WHOLE_QUEUE_ANNOTATION } from './admission';

export const QUEUE_SPLIT_GROUP = 'queuesplit.dev';
export const QUEUE_SPLIT_VERSION = 'v1alpha1';
export const QUEUE_SPLIT_API_VERSION = `${QUEUE_SPLIT_GROUP}/${QUEUE_SPLIT_VERSION}` as const;
export const QUEUE_SPLIT_KIND = 'QueueSplit';
export const QUEUE_SPLIT_PLURAL = 'queuesplits';
export const QUEUE_SPLIT_SINGULAR = 'queuesplit';
export const QUEUE_SPLIT_SHORT_NAME = 'qsplit';

/** Phases a developer sees for their split (and for each of its queues). */
export const QUEUE_SPLIT_PHASES = [
  'Pending',
  'Preparing',
  'Active',
  'Draining',
  'Rejected',
  'Degraded',
  'Failed',
  'Stopped',
] as const;
export type QueueSplitPhase = (typeof QUEUE_SPLIT_PHASES)[number];

export const DELIVERY_MODES = ['http', 'env', 'relay'] as const;

const immutable = (what: string) => ({
  'x-kubernetes-validations': [
    { rule: 'self == oldSelf', message: `${what} is immutable; create a new QueueSplit instead.` },
  ],
});

const count = () => z.int().min(0);

export const workloadRefSchema = z
  .object({
    kind: z.enum(['Deployment', 'StatefulSet']).describe('Kind of the split workload.'),
    name: z.string().min(1).max(253).describe('Name of the workload in the QueueSplit namespace.'),
  })
  .describe('The annotated workload whose queues are split.')
  .meta(immutable('spec.workload'));

export const leaseSchema = z
  .object({
    renewTime: z.iso.datetime().describe('When the owner last renewed (RFC 3339, UTC).'),
    durationSeconds: z
      .int()
      .min(10)
      .max(3600)
      .describe('How long after renewTime the route stays attached without another renewal.'),
  })
  .describe('Renewed by the sidecar; an expired lease drains the route.');

export const queueSplitSpecSchema = z
  .object({
    workload: workloadRefSchema,
    queues: z
      .array(z.string().min(1).max(63).regex(PATTERNS.queueName.regex))
      .min(1)
      .max(32)
      .describe('Logical queue names from the workload declaration.')
      .meta({ 'x-kubernetes-list-type': 'set', ...immutable('spec.queues') }),
    filter: z
      .record(z.string().max(255), z.string().max(MAX_FILTER_VALUE_LENGTH))
      .optional()
      .describe(
        `Header filter: key=value pairs, AND-ed. {} takes every message, cannot share the queue, and is accepted only on a workload annotated ${WHOLE_QUEUE_ANNOTATION}=true. Set this or match.`,
      )
      // Bounded so the API server can cost the rules. The API server refuses what CEL can state
      // (the key zod would drop, keys the "k=v" form cannot carry); the controller's full
      // validator (validateQueueSplit.ts) enforces the rest, e.g. key bytes and total size.
      .meta({
        maxProperties: MAX_FILTER_PAIRS,
        'x-kubernetes-validations': [
          ...immutable('spec.filter')['x-kubernetes-validations'],
          {
            rule: "!('__proto__' in self)",
            message:
              'spec.filter uses the reserved key "__proto__", which JSON tools drop (widening the filter to every message); filter on a different header.',
          },
          {
            rule: "self.all(k, k != '' && !k.contains('=') && !k.contains(',') && k.trim() == k)",
            message:
              'spec.filter keys must be non-empty header names without "=", "," or surrounding spaces.',
          },
        ],
      }),
    match: anyOfSchema
      .optional()
      .describe(
        'A filter beyond exact header values (docs/design.md §4): anyOf clauses; each clause maps a key (a header, baggage:<member> or body:$.<path>) to predicates (equals, in, prefix, regex, exists and their not* forms). Set this or filter.',
      )
      .meta(immutable('spec.match')),
    owner: z
      .string()
      .min(1)
      .max(253)
      .describe('Who the split is for (shown to teammates).')
      .meta(immutable('spec.owner')),
    routeId: z
      .string()
      .regex(ROUTE_ID_PATTERN)
      .describe('Stable random id of the route; names of its shadows derive from it.')
      .meta(immutable('spec.routeId')),
    lease: leaseSchema,
    session: z
      .object({
        publicKey: z
          .string()
          .regex(PUBLIC_KEY_PATTERN)
          .optional()
          .describe(
            "ed25519:<base64url> public half of the key whose secret the sidecar proves by signing the queue-agent's challenge (the secret never leaves the laptop).",
          ),
        secretHash: z
          .string()
          .regex(SECRET_HASH_PATTERN)
          .optional()
          .describe(
            'Splits made before public keys: no longer accepted by the queue-agent (start the split again).',
          ),
      })
      .optional()
      .describe(
        "The route's session stream: the queue-agent streams this split's messages only to the sidecar that signs its challenge with the key behind publicKey. Absent: no stream (env delivery).",
      )
      .meta(immutable('spec.session')),
    delivery: z
      .object({
        mode: z.enum(DELIVERY_MODES).describe('How the sidecar hands messages to the debugged process.'),
      })
      .optional()
      .describe('Hint for tools; the controller does not depend on it.'),
  })
  .describe('What the developer asks for.')
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'has(self.filter) != has(self.match)',
        message: 'spec needs exactly one of filter (exact header values) and match (anyOf clauses).',
      },
    ],
  });

export const conditionSchema = z.object({
  type: z.string().min(1).max(316).describe('Condition type, e.g. Ready, Attached, Blocked.'),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
    .describe('CamelCase reason, e.g. FilterOverlaps.'),
  message: z.string().max(32768).describe('What blocks or happened, and the safe next action.'),
  lastTransitionTime: z.iso.datetime(),
  observedGeneration: count().optional(),
});

export const queueStatusSchema = z.object({
  name: z.string().min(1).describe('Logical queue name.'),
  phase: z.enum(QUEUE_SPLIT_PHASES),
  shadow: z
    .object({
      source: z.string().optional().describe('Session shadow topic or queue the local consumer reads.'),
      group: z.string().optional().describe('Kafka consumer group for the session shadow.'),
    })
    .optional(),
  envOverrides: z
    .record(z.string(), z.string())
    .optional()
    .describe('Non-secret env vars a local consumer needs (source → session shadow, group → session group).'),
  fileOverrides: z
    .array(
      z.object({
        path: z.string().describe('The file as the workload container reads it.'),
        key: z.string().describe('The key in it.'),
        value: z.string().describe('What a local consumer needs it set to.'),
      }),
    )
    .max(8)
    .optional()
    .describe(
      'Keys of mounted config files a local consumer needs set, where the workload reads its source or group from a file (source → session shadow, group → session group).',
    ),
  delivered: count().optional().describe('Messages routed to this split on this queue.'),
  lag: count().optional().describe('Messages in the session shadow not yet consumed.'),
  sourceBacklog: count()
    .optional()
    .describe(
      "While the queue-agent copies: messages waiting in the source it has not copied yet, shared by every split of the workload, from 1,000 on (less is a chunk in flight) to two significant digits. What splitting adds to the application's lag.",
    ),
});

export const queueSplitStatusSchema = z
  .object({
    phase: z.enum(QUEUE_SPLIT_PHASES).optional(),
    observedGeneration: count().optional(),
    queues: z
      .array(queueStatusSchema)
      .optional()
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
    delivered: count().optional().describe('Messages routed to this split, all queues.'),
    lag: count().optional().describe('Unconsumed session messages, all queues.'),
    nextAction: z.string().max(4096).optional().describe('The safe next step when the split is blocked.'),
    conditions: z
      .array(conditionSchema)
      .optional()
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
  })
  .describe('What the controller observed; written through the status subresource.');

export type WorkloadRef = z.infer<typeof workloadRefSchema>;
export type QueueSplitSpec = z.infer<typeof queueSplitSpecSchema>;
export type QueueSplitStatus = z.infer<typeof queueSplitStatusSchema>;
export type QueueSplitCondition = z.infer<typeof conditionSchema>;
export type QueueSplitQueueStatus = z.infer<typeof queueStatusSchema>;

export interface QueueSplit {
  apiVersion: typeof QUEUE_SPLIT_API_VERSION;
  kind: typeof QUEUE_SPLIT_KIND;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
  };
  spec: QueueSplitSpec;
  status?: QueueSplitStatus;
}
