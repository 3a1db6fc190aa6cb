// The versioned document the controller persists per workload (in its state ConfigMap) before
// every step, so a restart resumes exactly where it stopped. Reading it is strict: a corrupt
// document or one written by a newer controller is refused with a clear error, never guessed at.
import { z } from 'zod';
import { routeFilterSchema } from '../filter/schema';
import { providerSchema } from '../providerSchema';
import { PROVIDER_NAMES, type Provider } from '../providers';
import { coreProvider, type ProviderTypesOf } from '../providers/registry';
import { fail, fieldError, guarded, ok, type FieldError, type Result } from '../result';
import { PUBLIC_KEY_PATTERN } from '../sessionSecret';
import { describeValue, issuesToFieldErrors } from '../zodIssues';
import { QUEUE_PHASES, ROUTE_PHASES, WORKLOAD_PHASES, type WorkloadPhase } from './phases';

export const STATE_API_GROUP = 'queuesplit.dev/state';
export const STATE_VERSION = 1;
export const STATE_API_VERSION = `${STATE_API_GROUP}/v${STATE_VERSION}` as const;
/** A ConfigMap holds at most 1 MiB. */
export const MAX_STATE_BYTES = 1024 * 1024;

const count = () => z.int().min(0);

/** Every kind of broker resource a provider records (`topic`, `queue`, …). */
type ResourceKind = ProviderTypesOf<Provider>['resourceKind'];
// Each provider lists its own kinds; a Set cannot say that the list is not empty.
const RESOURCE_KINDS = [
  ...new Set(PROVIDER_NAMES.flatMap((provider) => coreProvider(provider).resourceKinds)),
] as [ResourceKind, ...ResourceKind[]];

export const brokerResourceSchema = z.object({
  provider: providerSchema,
  kind: z.enum(RESOURCE_KINDS),
  name: z.string().min(1),
  /** Logical queue the resource belongs to. */
  queue: z.string().min(1),
  /** Set for a route's session resources. */
  routeId: z.string().optional(),
  epoch: count(),
});

export const queueStateSchema = z.object({
  provider: providerSchema,
  phase: z.enum(QUEUE_PHASES),
  /** The queue finished the current phase's step. */
  done: z.boolean(),
  /** Activation epoch the queue's shadows were named with. */
  epoch: count(),
});

export const routeStateSchema = z.object({
  routeId: z.string().min(1),
  owner: z.string(),
  queues: z.array(z.string()).min(1),
  filter: routeFilterSchema,
  phase: z.enum(ROUTE_PHASES),
  /** Desired generation at which the route's current phase was published. */
  generation: count(),
  leaseExpiresAt: z.iso.datetime(),
  lastError: z.string().optional(),
  /** The QueueSplit's spec.session.publicKey (core/sessionSecret.ts); absent: no session stream
   * (a route of a split made before public keys kept a `secretHash`, which is dropped on read). */
  publicKey: z.string().regex(PUBLIC_KEY_PATTERN).optional(),
  /** The metadata.uid of the QueueSplit the route belongs to (agent/controller/routeBinding.ts);
   * absent in state written before routes were bound. */
  splitUid: z.string().min(1).optional(),
});

export const workflowSchema = z.object({
  /** What the multi-step phases are doing: activating queues, aborting that, or handing back. */
  kind: z.enum(['activation', 'abort', 'handback']),
  queues: z.array(z.string()).min(1),
  reason: z.string().optional(),
  redrains: count(),
});

export const splitStateSchema = z.object({
  apiVersion: z.literal(STATE_API_VERSION),
  workload: z.object({
    kind: z.enum(['Deployment', 'StatefulSet']),
    namespace: z.string().min(1),
    name: z.string().min(1),
    uid: z.string().min(1),
  }),
  installId: z.string().min(1),
  phase: z.enum(WORKLOAD_PHASES),
  /** Desired generation for the agent; bumped whenever what it must do changes. */
  generation: count(),
  activationEpoch: count(),
  preActivationReplicas: count().nullable(),
  preActivationResourceVersion: z.string().nullable(),
  /** The then-current replica count recorded before the handback scale-down. */
  handbackReplicas: count().nullable(),
  handbackResourceVersion: z.string().nullable(),
  /** Queues whose source the queue-agent owns and whose app reads the app shadow. */
  activeQueues: z.array(z.string()),
  /** Every declared queue, keyed by logical name. */
  queues: z.record(z.string(), queueStateSchema),
  workflow: workflowSchema.nullable(),
  routes: z.array(routeStateSchema),
  /** Every broker resource a split created or is about to create (recorded first). */
  inventory: z.array(brokerResourceSchema),
  /** Engine checkpoints per queue; opaque to the controller. */
  checkpoints: z.record(z.string(), z.unknown()),
  /** Resources kept because no loss-proof delete exists or they could not be verified empty. */
  cleanupPending: z.array(z.object({ resource: brokerResourceSchema, reason: z.string() })),
  degraded: z
    .object({ from: z.enum(WORKLOAD_PHASES), reason: z.string(), queue: z.string().optional() })
    .nullable(),
});

export type SplitState = z.infer<typeof splitStateSchema>;
export type QueueState = z.infer<typeof queueStateSchema>;
export type RouteState = z.infer<typeof routeStateSchema>;
export type BrokerResource = z.infer<typeof brokerResourceSchema>;
export type Workflow = z.infer<typeof workflowSchema>;

export interface InitialStateInput {
  workload: SplitState['workload'];
  installId: string;
  /** Declared queues and their providers (from the resolved declaration). */
  queues: Readonly<Record<string, Provider>>;
}

export function initialState(input: InitialStateInput): SplitState {
  const queues: Record<string, QueueState> = {};
  for (const [name, queueProvider] of Object.entries(input.queues)) {
    queues[name] = { provider: queueProvider, phase: 'INACTIVE', done: false, epoch: 0 };
  }
  return {
    apiVersion: STATE_API_VERSION,
    workload: { ...input.workload },
    installId: input.installId,
    phase: 'IDLE',
    generation: 0,
    activationEpoch: 0,
    preActivationReplicas: null,
    preActivationResourceVersion: null,
    handbackReplicas: null,
    handbackResourceVersion: null,
    activeQueues: [],
    queues,
    workflow: null,
    routes: [],
    inventory: [],
    checkpoints: {},
    cleanupPending: [],
    degraded: null,
  };
}

export function serializeState(state: SplitState): string {
  return JSON.stringify(state);
}

const CORRUPT_FIX =
  'The controller will not act on a state it cannot read. Restore the state ConfigMap from a backup, or ask an operator to inspect the workload and its broker resources before removing it.';

/** Reads a persisted document (JSON text or parsed value). Never throws. */
export function parseState(input: unknown): Result<SplitState> {
  return guarded('', () => parseStateValue(input));
}

function parseStateValue(input: unknown): Result<SplitState> {
  let value: unknown = input;
  if (typeof input === 'string') {
    if (Buffer.byteLength(input, 'utf8') > MAX_STATE_BYTES) {
      return fail([
        fieldError(
          '',
          `is larger than ${MAX_STATE_BYTES} bytes, which no state ConfigMap can hold.`,
          CORRUPT_FIX,
        ),
      ]);
    }
    try {
      value = JSON.parse(input);
    } catch (error) {
      const why = error instanceof Error ? error.message : 'unreadable';
      return fail([fieldError('', `is not valid JSON (${why}); the state is corrupt.`, CORRUPT_FIX)]);
    }
  }
  const version = versionError(value);
  if (version) return fail([version]);
  const parsed = splitStateSchema.safeParse(value);
  if (!parsed.success) {
    const errors = issuesToFieldErrors(parsed.error.issues, splitStateSchema, value);
    return fail(
      errors.map((e) => ({ ...e, problem: `${e.problem} (the state is corrupt)`, fix: CORRUPT_FIX })),
    );
  }
  const consistency = consistencyErrors(parsed.data);
  return consistency.length > 0 ? fail(consistency) : ok(parsed.data);
}

function versionError(value: unknown): FieldError | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fieldError('', 'is not a state document (expected a JSON object).', CORRUPT_FIX);
  }
  const apiVersion: unknown = (value as { apiVersion?: unknown }).apiVersion;
  const match =
    typeof apiVersion === 'string' ? /^queuesplit\.dev\/state\/v(\d{1,6})$/.exec(apiVersion) : null;
  if (!match) {
    return fieldError(
      'apiVersion',
      `is ${describeValue(apiVersion)}, not ${STATE_API_VERSION}.`,
      CORRUPT_FIX,
    );
  }
  const version = Number(match[1]);
  if (version > STATE_VERSION) {
    return fieldError(
      'apiVersion',
      `is ${String(apiVersion)}: the state was written by a newer Queue Split controller (this one understands up to v${STATE_VERSION}).`,
      'Upgrade the Queue Split controller to the version that wrote this state (or newer). Do not edit or delete the state: it records broker resources and replica counts needed to hand the workload back.',
    );
  }
  if (version < STATE_VERSION) {
    return fieldError(
      'apiVersion',
      `is ${String(apiVersion)}, which no released controller wrote.`,
      CORRUPT_FIX,
    );
  }
  return undefined;
}

/** Cross-field rules the schema cannot state; a violation means the document is corrupt. */
function consistencyErrors(state: SplitState): FieldError[] {
  const errors: FieldError[] = [];
  const corrupt = (path: string, problem: string) =>
    errors.push(fieldError(path, `${problem} (the state is corrupt)`, CORRUPT_FIX));
  const checkQueues = (queues: readonly string[], path: string) =>
    queues.forEach((queue, index) => {
      if (!Object.hasOwn(state.queues, queue))
        corrupt(`${path}[${index}]`, `names undeclared queue "${queue}".`);
    });
  checkQueues(state.activeQueues, 'activeQueues');
  checkQueues(state.workflow?.queues ?? [], 'workflow.queues');
  const ids = new Set<string>();
  state.routes.forEach((route, i) => {
    if (ids.has(route.routeId)) corrupt(`routes[${i}].routeId`, `"${route.routeId}" appears twice.`);
    ids.add(route.routeId);
    checkQueues(route.queues, `routes[${i}].queues`);
  });
  if ((state.phase === 'DEGRADED') !== (state.degraded !== null)) {
    corrupt('degraded', `must be set exactly when the phase is DEGRADED (phase is ${state.phase}).`);
  }
  const inWorkflow: readonly WorkloadPhase[] = ['IDLE', 'ACTIVE', 'DEGRADED'];
  if (!inWorkflow.includes(state.phase) && state.workflow === null) {
    corrupt('workflow', `is missing although phase ${state.phase} is a workflow step.`);
  }
  return errors;
}
