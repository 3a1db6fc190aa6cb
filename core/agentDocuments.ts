// Strict reading of the two documents the controller and a queue-agent exchange (contract:
// core/agentProtocol.ts). Both live in ConfigMaps of the tenant namespace, so neither side
// trusts them: each is parsed with a zod schema and a version, and the agent recomputes every
// broker name the desired document carries from core/names.ts — a document naming anything
// else (say, a production topic for cleanup) is refused as a whole, never partly acted on.
import { z } from 'zod';
import {
  DESIRED_API_VERSION,
  OBSERVED_API_VERSION,
  type AgentQueuePlan,
  type QueuePlanOf,
  type DesiredState,
  type ObservedState,
  type RouteShadow,
} from './agentProtocol';
import { parseFilter } from './filter';
import { routeFilterSchema } from './filter/schema';
import { planName } from './planSchema';
import { PROVIDER_NAMES, type Provider } from './providers';
import { coreProvider } from './providers/registry';
import { fail, fieldError, guarded, ok, type FieldError, type Result } from './result';
import { PUBLIC_KEY_PATTERN } from './sessionSecret';
import { WORKLOAD_PHASES } from './state/phases';
import { describeValue, issuesToFieldErrors } from './zodIssues';

// ---- names ---------------------------------------------------------------------------------

export interface QueueId {
  installId: string;
  workloadUid: string;
  queue: string;
  epoch: number;
}

/** The names a queue's plan carries, derived only from its provider's names. */
export function planNames<P extends Provider>(provider: P, id: QueueId): QueuePlanOf<P>['names'] {
  return coreProvider(provider).planNames(id);
}

/** A route's session shadow (and groups) on one queue, derived only from its provider's names. */
export function routeShadowNames(provider: Provider, id: QueueId & { routeId: string }): RouteShadow {
  return coreProvider(provider).routeShadow(id);
}

/** `<installId>/<workload uid>` (install ids may contain "/"; UIDs never do). */
export function splitActivationId(
  activationId: string,
): { installId: string; workloadUid: string } | undefined {
  const cut = activationId.lastIndexOf('/');
  if (cut <= 0 || cut === activationId.length - 1) return undefined;
  return { installId: activationId.slice(0, cut), workloadUid: activationId.slice(cut + 1) };
}

// ---- schemas -------------------------------------------------------------------------------

const name = planName;
const int = () => z.int();
const count = () => z.int().min(0);
const phase = z.enum(WORKLOAD_PHASES);
const kept = z.array(z.object({ name: z.string(), reason: z.string() }));

/** One schema per provider (core/providers/<provider>/plan.ts), told apart by `provider`. */
type PlanSchema = ReturnType<typeof coreProvider>['planSchema'];
const queuePlanSchema = z.discriminatedUnion(
  'provider',
  PROVIDER_NAMES.map((provider) => coreProvider(provider).planSchema) as [PlanSchema, ...PlanSchema[]],
);

const routeSchema = z.object({
  routeId: z.string().min(1).max(64),
  // Only the shape here: the raw filter is checked by parseFilter below (zod drops "__proto__").
  filter: routeFilterSchema,
  queues: z.array(z.string().min(1)).min(1),
  phase: z.enum(['ATTACHING', 'ACTIVE', 'DRAINING']),
  generation: count(),
  shadows: z.record(
    z.string(),
    z.object({ shadow: name, sessionGroup: name.optional(), drainGroup: name.optional() }),
  ),
  publicKey: z.string().regex(PUBLIC_KEY_PATTERN).optional(),
});

export const desiredStateSchema = z.object({
  apiVersion: z.literal(DESIRED_API_VERSION),
  activationId: z.string().min(3),
  generation: count(),
  phase,
  queues: z.array(queuePlanSchema),
  routes: z.array(routeSchema),
}) satisfies z.ZodType<DesiredState>;

const outcomeSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('done'),
    checkpoint: z.unknown().optional(),
    handoff: z.unknown().optional(),
    kept: kept.optional(),
    evidence: z.string(),
  }),
  z.object({ kind: z.literal('pending'), reason: z.string() }),
  z.object({ kind: z.literal('degraded'), reason: z.string(), safeAction: z.string() }),
  z.object({ kind: z.literal('rejected'), reason: z.string(), nothingChanged: z.literal(true).optional() }),
]);

export const observedStateSchema = z.object({
  apiVersion: z.literal(OBSERVED_API_VERSION),
  activationId: z.string(),
  observedGeneration: count(),
  updatedAt: z.string(),
  queues: z.record(
    z.string(),
    z.object({
      step: phase,
      generation: count(),
      outcome: outcomeSchema,
      health: z.enum(['ok', 'degraded']),
      published: z.record(z.string(), count()),
      appShadowConsumers: count().optional(),
      sourceConsumers: count().optional(),
      checkpoint: z.unknown().optional(),
      lag: z
        .object({
          routes: z.record(z.string(), count()),
          source: count().optional(),
          behindSince: z.string().optional(),
        })
        .optional(),
    }),
  ),
  routes: z.record(
    z.string(),
    z.object({
      // -1 until every queue acked a generation.
      ackedGeneration: int().min(-1),
      drained: z.object({ proven: z.boolean(), evidence: z.string(), kept }).optional(),
      failed: z.string().optional(),
    }),
  ),
  refused: z.string().optional(),
  restarts: z.object({ count: count(), lastAt: z.string().max(64) }).optional(),
}) satisfies z.ZodType<ObservedState>;

// ---- parsing -------------------------------------------------------------------------------

function parseJson<T>(
  text: unknown,
  schema: z.ZodType<T>,
  apiVersion: string,
  what: string,
): Result<{ raw: unknown; value: T }> {
  let raw: unknown = text;
  if (typeof text === 'string') {
    try {
      raw = JSON.parse(text);
    } catch (error) {
      const why = error instanceof Error ? error.message : 'unreadable';
      return fail([fieldError('', `is not valid JSON (${why}).`, `Let the ${what} rewrite it.`)]);
    }
  }
  const version: unknown =
    typeof raw === 'object' && raw !== null ? (raw as { apiVersion?: unknown }).apiVersion : undefined;
  if (version !== apiVersion) {
    return fail([
      fieldError(
        'apiVersion',
        `is ${describeValue(version)}, not ${apiVersion}.`,
        `Run a controller and queue-agents of the same Queue Split version; let the ${what} rewrite it.`,
      ),
    ]);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return fail(issuesToFieldErrors(parsed.error.issues, schema, raw));
  return ok({ raw, value: parsed.data });
}

/** The observed document as the controller reads it. Never throws. */
export function parseObserved(text: unknown): Result<ObservedState> {
  return guarded('', () => {
    const parsed = parseJson(text, observedStateSchema, OBSERVED_API_VERSION, 'queue-agent');
    return parsed.ok ? ok(parsed.value.value) : parsed;
  });
}

/**
 * The desired document as the agent reads it: the schema, every route filter by the filter
 * rules, and every broker name recomputed from the activation id and epochs. Never throws.
 */
export function parseDesired(text: unknown): Result<DesiredState> {
  return guarded('', () => {
    const parsed = parseJson(text, desiredStateSchema, DESIRED_API_VERSION, 'controller');
    if (!parsed.ok) return parsed;
    const errors = desiredErrors(parsed.value.value, parsed.value.raw);
    return errors.length > 0 ? fail(errors) : ok(parsed.value.value);
  });
}

function desiredErrors(desired: DesiredState, raw: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const forged = (path: string, problem: string) =>
    errors.push(
      fieldError(
        path,
        problem,
        'Only the Queue Split controller writes this document; it rewrites it. Find out who changed the ConfigMap.',
      ),
    );
  const ids = splitActivationId(desired.activationId);
  if (!ids) {
    forged('activationId', 'is not "<installId>/<workload uid>".');
    return errors;
  }
  const plans = new Map<string, AgentQueuePlan>();
  // The names as written: a name the schema does not keep for the provider is refused too.
  const rawQueues = (raw as { queues: { names: Record<string, unknown> }[] }).queues;
  desired.queues.forEach((plan, i) => {
    if (plans.has(plan.name)) forged(`queues[${i}].name`, `"${plan.name}" appears twice.`);
    plans.set(plan.name, plan);
    const expected: Record<string, string> = {
      ...planNames(plan.provider, { ...ids, queue: plan.name, epoch: plan.epoch }),
    };
    const written = rawQueues[i]!.names;
    for (const key of Object.keys({ ...expected, ...written })) {
      if (written[key] !== expected[key])
        forged(
          `queues[${i}].names.${key}`,
          `is ${describeValue(written[key])}, but core/names derives ${describeValue(expected[key])} for queue ${plan.name} (epoch ${plan.epoch}).`,
        );
    }
  });
  const rawRoutes = (raw as { routes: { filter: Record<string, unknown> }[] }).routes;
  desired.routes.forEach((route, i) => {
    const filter = parseFilter(rawRoutes[i]!.filter, `routes[${i}].filter`);
    if (!filter.ok) filter.errors.forEach((e) => forged(e.path, e.problem));
    const shadowQueues = Object.keys(route.shadows).sort().join();
    if (shadowQueues !== [...route.queues].sort().join())
      forged(
        `routes[${i}].shadows`,
        `names queues ${shadowQueues || '(none)'}, not the route's ${route.queues.join()}.`,
      );
    route.queues.forEach((queue) => {
      const plan = plans.get(queue);
      if (!plan) {
        forged(`routes[${i}].queues`, `names queue "${queue}", which has no plan in this document.`);
        return;
      }
      const expected = routeShadowNames(plan.provider, {
        ...ids,
        queue,
        epoch: plan.epoch,
        routeId: route.routeId,
      });
      const actual = route.shadows[queue] ?? { shadow: '' };
      for (const key of Object.keys({ ...expected, ...actual }) as (keyof typeof expected)[]) {
        if (actual[key] !== expected[key])
          forged(
            `routes[${i}].shadows.${queue}.${key}`,
            `is ${describeValue(actual[key])}, but core/names derives ${describeValue(expected[key])}.`,
          );
      }
    });
  });
  return errors;
}
