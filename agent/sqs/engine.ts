// The SQS engine (docs/providers/sqs.md, docs/design.md §7): the engine kernel
// (../engine/kernel.ts) driving SQS's broker port. The pump (pump.ts) copies each source
// message to exactly one shadow queue and deletes it after the send succeeded, with a ledger so
// a retried copy goes to the same destination; the fence is a lock message held in flight
// (fence.ts); proofs are stable counts over a window longer than the visibility timeout
// (proofs.ts); drains, the handback and the rollback move messages with mover.ts. A FIFO
// source gets FIFO shadows, copies that keep each group's order, and deduplication ids.
import { createHash } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import type { FieldError } from '../../core/result';
import type {
  AbortResult,
  Checkpoint,
  CleanupReadyResult,
  EngineCondition,
  EnginePhase,
  HandoffData,
  HandoffResult,
  Outcome,
  PrepareResult,
  PublishedRoutes,
  RecoverResult,
  RetainedResource,
  RouteDrainResult,
  RoutesResult,
  RouteSpec,
  ShadowLag,
} from '../engine/contract';
import { EngineKernel } from '../engine/kernel';
import { sumLag } from '../engine/lag';
import { degraded, pending, rejected } from '../engine/outcome';
import type { Blocked, BrokerPort, EngineView, KernelState, RemovedRoute, Step } from '../engine/port';
import { silentLogger, type Logger } from '../log';
import { PROVIDER, sqsCheckpoints, type SqsState } from './checkpoint';
import {
  DEFAULT_PREFETCH,
  engineTiming,
  isFifoName,
  isQueueName,
  queueNameOf,
  shadowNameError,
  siblingUrl,
  validateConfig,
  type SqsEngineConfig,
  type SqsEngineDeps,
  type SqsTiming,
} from './config';
import { describeSqsError, errorName, isNetworkError, isQueueMissing } from './errors';
import { deniedOnSource } from './rights';
import { LockFence } from './fence';
import { filterView } from './messages';
import { moveAll } from './mover';
import { describeCounts, isEmpty, NO_QUEUE, proveStable, readCounts } from './proofs';
import { SourcePump } from './pump';
import { shadowAttributes, visibilitySeconds } from './shadowAttributes';

/** The message attribute the engine names messages by in hooks (test seams) and nothing else. */
const HOOK_ID_ATTRIBUTE = 'x-message-id';

const now = () => new Date().toISOString();

/** Phases after which the split's own cleanup may have deleted the lock queue. */
const PAST_HANDBACK: readonly EnginePhase[] = ['handed-off', 'aborted', 'cleaned'];

export class SqsEngine extends EngineKernel<RemovedRoute, SqsState> {
  /** Names the controller's scheme gave, as SQS queue names of the source's kind. */
  private readonly shadowName: (name: string) => string;

  constructor(given: SqsEngineConfig, deps: SqsEngineDeps = {}) {
    const shadowName = (name: string) =>
      given.fifoSuffix && isFifoName(queueNameOf(given.sourceQueueUrl)) && !isFifoName(name)
        ? `${name}.fifo`
        : name;
    const config = { ...given, appShadow: shadowName(given.appShadow) };
    const log = (deps.logger ?? silentLogger).child({
      engine: PROVIDER,
      activation: config.activationId,
      epoch: config.epoch,
      source: queueNameOf(config.sourceQueueUrl),
    });
    super((view) => new SqsBroker(config, deps, view, log), log);
    this.shadowName = shadowName;
  }

  private named(route: RouteSpec): RouteSpec {
    return route.shadow === '' ? route : { ...route, shadow: this.shadowName(route.shadow) };
  }

  override reconcileRoutes(generation: number, routes: readonly RouteSpec[]): Promise<Outcome<RoutesResult>> {
    return super.reconcileRoutes(
      generation,
      routes.map((r) => this.named(r)),
    );
  }

  override drainRoute(route: RouteSpec): Promise<Outcome<RouteDrainResult>> {
    return super.drainRoute(this.named(route));
  }

  override recover(checkpoint: Checkpoint, published?: PublishedRoutes): Promise<Outcome<RecoverResult>> {
    return super.recover(
      checkpoint,
      published ? { ...published, routes: published.routes.map((r) => this.named(r)) } : undefined,
    );
  }
}

class SqsBroker implements BrokerPort<RemovedRoute, SqsState> {
  readonly provider = PROVIDER;
  readonly activationId: string;
  readonly epoch: number;
  readonly appShadow: string;
  readonly stepTimeoutMs: number;
  readonly reservedNames: readonly string[];
  readonly inFlight = { what: 'copies', awaits: 'source delete' };
  readonly codec = sqsCheckpoints;
  readonly identity: Pick<SqsState, 'activationId' | 'epoch' | 'sourceQueueUrl' | 'appShadow' | 'lockQueue'>;
  private readonly timing: SqsTiming;
  private readonly client: SQSClient;
  private readonly ownsClient: boolean;
  private readonly fence: LockFence;
  private readonly pump: SourcePump;
  private readonly sourceUrl: string;
  private readonly fifo: boolean;
  /** Names this activation in move deduplication ids (at most 128 characters in all). */
  private readonly activationTag: string;
  /** What shadows are created with: decided in prepare, kept in the checkpoint. */
  private shadowAttrs: Record<string, string> | undefined;
  /** The phase a recovered checkpoint was in (the kernel's is still `new` during recover). */
  private restoredPhase: EnginePhase | undefined;
  private reachable = true;
  private downSince: string | undefined;
  /** Messages moved per shadow across the calls of one drain (counted afresh after a restart). */
  private readonly moves = new Map<string, number>();

  constructor(
    private readonly config: SqsEngineConfig,
    private readonly deps: SqsEngineDeps,
    private readonly view: EngineView<RemovedRoute>,
    private readonly log: Logger,
  ) {
    this.activationId = config.activationId;
    this.epoch = config.epoch;
    this.appShadow = config.appShadow;
    this.sourceUrl = config.sourceQueueUrl;
    this.fifo = isFifoName(queueNameOf(config.sourceQueueUrl));
    this.activationTag = /^[\x21-\x7e]{1,48}$/.test(config.activationId)
      ? config.activationId
      : createHash('sha256').update(config.activationId).digest('hex').slice(0, 32);
    this.reservedNames = [queueNameOf(config.sourceQueueUrl), config.lockQueue];
    const { activationId, epoch, sourceQueueUrl, appShadow, lockQueue } = config;
    this.identity = { activationId, epoch, sourceQueueUrl, appShadow, lockQueue };
    this.timing = engineTiming(config.timing);
    this.stepTimeoutMs = this.timing.stepTimeoutMs;
    this.ownsClient = deps.client === undefined;
    this.client =
      deps.client ??
      new SQSClient({
        region: config.region,
        ...(config.endpoint ? { endpoint: config.endpoint } : {}),
        ...(config.credentials ? { credentials: config.credentials } : {}),
      });
    const onReachable = (ok: boolean) => this.setReachable(ok);
    this.fence = new LockFence({
      client: this.client,
      lockQueue: config.lockQueue,
      lockUrl: this.urlOf(config.lockQueue),
      activationId: config.activationId,
      epoch: config.epoch,
      visibilitySeconds: this.timing.lockVisibilitySeconds,
      log,
      onReachable,
      onChange: () => undefined,
    });
    const snsEnvelope = config.snsEnvelope ?? 'auto';
    this.pump = new SourcePump({
      client: this.client,
      sourceUrl: this.sourceUrl,
      urlOf: (queue) => this.urlOf(queue),
      timing: this.timing,
      prefetch: config.prefetch ?? DEFAULT_PREFETCH,
      fifo: this.fifo,
      barrier: view.barrier,
      hooks: deps.hooks ?? {},
      log,
      messageIdAttribute: deps.hooks ? HOOK_ID_ATTRIBUTE : undefined,
      select: (message) => view.select(filterView(message, snsEnvelope)),
      recorded: (entry) => {
        const stands =
          entry.routeId === undefined || view.table.route(entry.routeId) || view.removed.has(entry.routeId);
        if (stands)
          return { routeId: entry.routeId, destination: entry.destination, generation: entry.generation };
        // The route was drained since: its residue went to the application shadow, and so does this.
        return { routeId: undefined, destination: config.appShadow, generation: view.table.generation };
      },
      onCopied: (routeId) => view.countPublished(routeId),
      fenceHeld: () => this.fence.held,
      onReachable,
    });
  }

  /** Lost for good once another engine took the fence over (fence.ts invariant 3); a lock that
   * only lapsed, or that another holds, is waited for and won back. */
  lostFence(): Outcome<never> | undefined {
    const superseded = this.fence.superseded;
    return superseded
      ? degraded(
          'fenced',
          superseded.reason,
          'make sure only one queue-agent serves this queue; this engine stopped for good',
        )
      : undefined;
  }

  describeFailure(err: unknown) {
    return { fields: { code: errorName(err), error: describeSqsError(err) }, reason: describeSqsError(err) };
  }

  // ---- steps ------------------------------------------------------------------------------

  async prepare(): Promise<Step<PrepareResult>> {
    const invalid = validateConfig(this.config);
    if (invalid.length > 0) return { ok: false, outcome: rejected(invalid) };
    const source = await this.checkSource();
    if (!source.ok) return source;
    const { attributes, warnings } = shadowAttributes(source.value);
    await this.fence.seed();
    const fenced = await this.ensureFence();
    if (fenced) return { ok: false, outcome: fenced };
    const created = await this.createShadow(this.config.appShadow, attributes, 'appShadow');
    if (created) return { ok: false, outcome: created };
    this.shadowAttrs = attributes;
    for (const warning of warnings) this.log.warn('engine.source-warning', { warning });
    return {
      ok: true,
      value: this.prepareResult(warnings),
      log: { shadowAttributes: Object.keys(attributes).join(',') },
    };
  }

  prepared(): PrepareResult {
    return this.prepareResult([]);
  }

  start(): Promise<Blocked> {
    return this.startPump();
  }

  resume(): Promise<Blocked> {
    return this.startPump();
  }

  async up(): Promise<Blocked> {
    return this.ensureFence();
  }

  async stop(): Promise<Step<undefined>> {
    if (await this.pump.stop(this.timing.stepTimeoutMs)) return { ok: true, value: undefined };
    return {
      ok: false,
      outcome: pending('in-flight', `${this.pump.open} source messages still wait for their copy or delete`),
    };
  }

  handoff(): HandoffData {
    return { provider: PROVIDER, data: { sourceQueueUrl: this.sourceUrl, activationId: this.activationId } };
  }

  checkRoutes(routes: readonly RouteSpec[]): FieldError[] {
    const errors: FieldError[] = [];
    routes.forEach((r, i) => {
      const path = `routes[${i}].shadow`;
      if (!isQueueName(r.shadow)) {
        errors.push({
          path,
          problem: `${JSON.stringify(r.shadow)} is not a usable SQS queue name`,
          fix: 'use 1-80 letters, digits, hyphens or underscores (a FIFO name ends in .fifo)',
        });
        return;
      }
      const kind = shadowNameError(queueNameOf(this.sourceUrl), r.shadow, path);
      if (kind) errors.push(kind);
    });
    return errors;
  }

  async addRoutes(added: readonly { route: RouteSpec; index: number }[]): Promise<Blocked> {
    if (added.length === 0) return undefined;
    const fenced = await this.ensureFence();
    if (fenced) return fenced;
    for (const { route, index } of added) {
      // Created again when it returns: CreateQueue with the same attributes is idempotent.
      const created = await this.createShadow(
        route.shadow,
        this.shadowAttrs ?? {},
        `routes[${index}].shadow`,
      );
      if (created) return created;
    }
    return undefined;
  }

  removedRoute(route: RouteSpec): RemovedRoute {
    return { routeId: route.routeId, shadow: route.shadow };
  }

  recordedRoute(spec: RouteSpec): RemovedRoute | undefined {
    return spec.shadow ? { routeId: spec.routeId, shadow: spec.shadow } : undefined;
  }

  async drainRoute(route: RemovedRoute): Promise<Step<RouteDrainResult>> {
    const fenced = await this.ensureFence();
    if (fenced) return { ok: false, outcome: fenced };
    const emptied = await this.empty(route.shadow, this.config.appShadow, 'the session consumer');
    if (!emptied.ok) return emptied;
    const removal = await this.remove(route.shadow, route.routeId);
    if (!removal.ok) return removal;
    this.moves.delete(route.shadow);
    return { ok: true, value: { moved: emptied.value, ...removal.value } };
  }

  async abort(): Promise<Step<AbortResult>> {
    // Stop copying before the rollback moves messages back, or the pump would copy them again.
    if (!(await this.pump.stop(this.timing.stepTimeoutMs))) {
      return {
        ok: false,
        outcome: pending(
          'in-flight',
          `${this.pump.open} source messages still wait for their copy or delete`,
        ),
      };
    }
    const fenced = await this.ensureFence();
    if (fenced) return { ok: false, outcome: fenced };
    let restored = 0;
    for (const { shadow } of this.shadows()) {
      const emptied = await this.empty(
        shadow,
        this.sourceUrl,
        'its consumers (scale the app to zero, detach sessions)',
      );
      if (!emptied.ok) return emptied;
      const proof = await this.proveEmpty(shadow);
      if (proof) return { ok: false, outcome: proof };
      restored += emptied.value;
    }
    for (const { shadow } of this.shadows()) this.moves.delete(shadow);
    return { ok: true, value: { restored } };
  }

  async drainApplication(): Promise<Blocked> {
    const fenced = await this.ensureFence();
    if (fenced) return fenced;
    const proof = await this.proveEmpty(this.config.appShadow);
    return proof && proof.kind === 'pending'
      ? pending('backlog', `the application has not drained its shadow: ${proof.blockingReason}`)
      : proof;
  }

  async commitHandoff(): Promise<Step<HandoffResult>> {
    const fenced = await this.ensureFence();
    if (fenced) return { ok: false, outcome: fenced };
    // The app reads the source next: what it left in its shadow moves there first.
    const emptied = await this.empty(
      this.config.appShadow,
      this.sourceUrl,
      'the application (scale it to zero)',
    );
    if (!emptied.ok) return emptied;
    const proof = await this.proveEmpty(this.config.appShadow);
    if (proof) return { ok: false, outcome: proof };
    this.moves.delete(this.config.appShadow);
    return { ok: true, value: { moved: emptied.value }, log: { moved: emptied.value } };
  }

  async verifyCleanupReady(): Promise<Step<CleanupReadyResult>> {
    const fenced = await this.ensureFence();
    if (fenced) return { ok: false, outcome: fenced };
    const names: string[] = [];
    for (const { shadow } of this.shadows()) {
      const proof = await proveStable(
        this.client,
        this.urlOf(shadow),
        isEmpty,
        this.windowMs(),
        this.timing.pollIntervalMs,
      );
      if (!proof.ok)
        return {
          ok: false,
          outcome: pending('backlog', `not ready for cleanup: ${shadow} has ${describeCounts(proof.counts)}`),
        };
      if (!proof.missing) names.push(shadow);
    }
    return { ok: true, value: { shadows: names } };
  }

  async cleanup(): Promise<Step<{ deleted: string[] }>> {
    const fenced = await this.ensureFence();
    if (fenced) return { ok: false, outcome: fenced };
    const deleted: string[] = [];
    for (const { shadow, routeId } of this.shadows()) {
      const removal = await this.remove(shadow, routeId);
      if (!removal.ok) return removal;
      deleted.push(...removal.value.deleted);
    }
    // Last, once every shadow is gone: nothing of this split needs the fence any more. A restart
    // before `cleaned` is recorded finds no lock queue past the handback and goes on (up()).
    this.fence.drop();
    await this.client
      .send(new DeleteQueueCommand({ QueueUrl: this.urlOf(this.config.lockQueue) }))
      .catch((err: unknown) => {
        if (!isQueueMissing(err)) throw err;
      });
    this.log.info('lock.deleted', { lockQueue: this.config.lockQueue });
    return {
      ok: true,
      value: { deleted },
      log: { deleted: deleted.length, retained: this.view.retained.length },
    };
  }

  // ---- checkpoint -------------------------------------------------------------------------

  checkpointState(kernel: KernelState<RemovedRoute>): SqsState {
    return {
      ...this.identity,
      phase: kernel.phase,
      ...(this.shadowAttrs ? { shadowAttributes: this.shadowAttrs } : {}),
      generation: kernel.generation,
      routes: kernel.routes,
      removed: kernel.removed,
      retained: kernel.retained,
      ledger: this.pump.ledger.records(),
    };
  }

  restore(s: SqsState): void {
    this.shadowAttrs = s.shadowAttributes ? { ...s.shadowAttributes } : undefined;
    this.restoredPhase = s.phase;
    this.pump.ledger.restore(s.ledger);
  }

  // ---- status -----------------------------------------------------------------------------

  conditions(): EngineCondition[] {
    const out: EngineCondition[] = [];
    const lost = this.fence.lost;
    if (lost) {
      out.push({
        code: 'fenced',
        reason: `${lost.reason}; this engine copies, moves and deletes nothing meanwhile`,
        safeAction: 'make sure only one queue-agent serves this queue',
        since: lost.since,
      });
    } else if (this.downSince && this.view.phase !== 'new') {
      out.push({
        code: 'broker-unavailable',
        reason:
          'SQS does not answer; retrying with backoff (held source messages come back after their visibility timeout)',
        safeAction: 'check the endpoint and the network; nothing is lost meanwhile',
        since: this.downSince,
      });
    }
    const lostSince = this.pump.sourceLostSince;
    if (lostSince) {
      out.push({
        code: 'source-lost',
        reason: `the source queue ${queueNameOf(this.sourceUrl)} does not exist any more`,
        safeAction: 'restore the source queue, then stop and start the split',
        since: lostSince,
      });
    }
    for (const p of this.pump.problems) {
      out.push(
        p.missing
          ? {
              code: 'destination-missing',
              reason: `copies to ${p.destination} fail: the queue does not exist; their source messages stay in flight and are retried`,
              safeAction: 'recreate the shadow or remove its route; never delete shadows by hand',
              since: p.since,
            }
          : {
              code: 'publish-failing',
              reason: `copies to ${p.destination} fail (${p.reason}); their source messages stay in flight and are retried`,
              safeAction: "check the queue-agent's SQS permissions and the queue",
              since: p.since,
            },
      );
    }
    return out;
  }

  get connected(): boolean {
    return this.reachable;
  }

  get retrying(): number {
    return this.pump.retrying;
  }

  /** Visible and delayed messages in the source: those in flight are the engine's own. */
  async sourceBacklog(): Promise<number | undefined> {
    const counts = await readCounts(this.client, this.sourceUrl);
    return counts === NO_QUEUE ? undefined : counts.visible + counts.delayed;
  }

  /** SQS has no consumers to count, only receives: the controller keeps the stable window. */
  appConsumers(): Promise<number | undefined> {
    return Promise.resolve(undefined);
  }

  shadowLag(): Promise<ShadowLag> {
    return sumLag(
      async (queue) => {
        const counts = await readCounts(this.client, this.urlOf(queue));
        return counts === NO_QUEUE ? undefined : counts.visible + counts.inFlight + counts.delayed;
      },
      this.config.appShadow,
      this.view.table.routes.map((r) => ({ routeId: r.routeId, shadow: r.shadow })),
    );
  }

  async close(): Promise<void> {
    // Copies that finish quickly are deleted; whatever is still held comes back to the source
    // after its visibility timeout (a duplicate at worst, to the same destination).
    await this.pump.halt(2_000);
    await this.fence.release();
    if (this.ownsClient) this.client.destroy();
  }

  // ---- internals ---------------------------------------------------------------------------

  private urlOf(queue: string): string {
    return siblingUrl(this.sourceUrl, queue);
  }

  private setReachable(ok: boolean): void {
    this.reachable = ok;
    if (ok) this.downSince = undefined;
    else this.downSince ??= now();
  }

  /** A proof's window: the shadows' visibility timeout plus how long counts may lag. */
  private windowMs(): number {
    return visibilitySeconds(this.shadowAttrs) * 1000 + this.timing.countsLagMs;
  }

  private prepareResult(warnings: readonly string[]): PrepareResult {
    return {
      sourceKind: this.fifo ? 'fifo' : 'standard',
      shadows: [this.config.appShadow],
      ...(this.shadowAttrs
        ? {
            reproduced: Object.entries(this.shadowAttrs)
              .map(([k, v]) => `${k}=${k === 'RedrivePolicy' ? 'source DLQ' : v}`)
              .join(', '),
          }
        : {}),
      warnings,
    };
  }

  /** The source exists, is of the kind its name says, and its attributes (the preflight). */
  private async checkSource(): Promise<Step<Record<string, string>>> {
    try {
      const { Attributes = {} } = await this.client.send(
        new GetQueueAttributesCommand({ QueueUrl: this.sourceUrl, AttributeNames: ['All'] }),
      );
      this.setReachable(true);
      if ((Attributes.FifoQueue === 'true') !== this.fifo) {
        // SQS names FIFO queues .fifo and only those: a mismatch is not the queue named.
        return {
          ok: false,
          outcome: rejected([
            {
              path: 'sourceQueueUrl',
              problem: `${queueNameOf(this.sourceUrl)} answers FifoQueue=${Attributes.FifoQueue ?? 'false'}, which its name contradicts`,
              fix: 'check the queue URL',
            },
          ]),
        };
      }
      const denied = await deniedOnSource(this.client, this.sourceUrl);
      if (denied.length > 0) {
        return {
          ok: false,
          outcome: rejected([
            {
              path: 'sourceQueueUrl',
              problem: `the queue-agent's identity may not call ${denied.join(' and ')} on ${queueNameOf(this.sourceUrl)}: the pump deletes each message from the source once its copy is confirmed`,
              fix: `allow ${denied.join(' and ')} on ${Attributes.QueueArn ?? 'the queue'} to the workload's credentials`,
            },
          ]),
        };
      }
      return { ok: true, value: Attributes };
    } catch (err) {
      if (!isQueueMissing(err)) throw err;
      return {
        ok: false,
        outcome: rejected([
          {
            path: 'sourceQueueUrl',
            problem: `the queue ${queueNameOf(this.sourceUrl)} does not exist (or this identity may not read its attributes)`,
            fix: 'check the queue URL and that the queue-agent may call GetQueueAttributes on it',
          },
        ]),
      };
    }
  }

  private async createShadow(
    name: string,
    attributes: Record<string, string>,
    path: string,
  ): Promise<Blocked> {
    try {
      await this.client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
      this.setReachable(true);
      return undefined;
    } catch (err) {
      if (isNetworkError(err)) throw err;
      const name_ = errorName(err);
      if (name_.includes('QueueAlreadyExists') || name_.includes('QueueNameExists')) {
        return rejected([
          {
            path,
            problem: `${name} exists with other attributes than this split's`,
            fix: 'record a fresh shadow name',
          },
        ]);
      }
      throw err;
    }
  }

  /** Takes the fence (or confirms it is held); why not otherwise. */
  private async ensureFence(): Promise<Blocked> {
    if (this.fence.held) return undefined;
    const waitMs = Math.min(this.timing.stepTimeoutMs, (this.timing.lockVisibilitySeconds + 1) * 1000);
    const got = await this.fence.acquire(waitMs);
    if (got.kind === 'held') return undefined;
    if (got.kind === 'missing') {
      const phase = this.view.phase === 'new' ? this.restoredPhase : this.view.phase;
      // Only this split's cleanup deletes the lock queue, after every shadow: nothing is left
      // that a second engine could race for.
      if (phase && PAST_HANDBACK.includes(phase)) {
        this.fence.drop();
        return undefined;
      }
      return pending(
        'fenced',
        `the lock queue ${this.config.lockQueue} does not exist; prepare creates it`,
        2_000,
      );
    }
    return pending('fenced', `${got.reason}; this engine copies nothing until it holds it`, 2_000);
  }

  /** Proves nobody else consumes the source (docs/providers/sqs.md), then consumes it. */
  private async startPump(): Promise<Blocked> {
    const fenced = await this.ensureFence();
    if (fenced) return fenced;
    const source = await this.checkSource();
    if (!source.ok) return source.outcome;
    if (!this.pump.active) {
      const window = visibilitySeconds(source.value) * 1000 + this.timing.countsLagMs;
      const quiet = await proveStable(
        this.client,
        this.sourceUrl,
        (c) => c.inFlight <= this.pump.open,
        window,
        this.timing.pollIntervalMs,
      );
      if (!quiet.ok) {
        return pending(
          'consumers-attached',
          `the source has ${quiet.counts.inFlight} messages in flight: another consumer still receives from it`,
          2_000,
        );
      }
    }
    this.pump.start();
    return undefined;
  }

  /** The shadows this engine still answers for: active and removed routes, then the app's. */
  private shadows(): { shadow: string; routeId: string | undefined }[] {
    const kept = new Set(this.view.retained.map((r) => r.name));
    const routes = [
      ...this.view.table.routes.map((r) => ({ shadow: r.shadow, routeId: r.routeId as string | undefined })),
      ...[...this.view.removed.values()].map((r) => ({
        shadow: r.shadow,
        routeId: r.routeId as string | undefined,
      })),
    ];
    return [...routes, { shadow: this.config.appShadow, routeId: undefined }].filter(
      (s) => !kept.has(s.shadow),
    );
  }

  /** Moves what `shadow` holds to `target` (a queue name or the source URL) once nobody holds
   * any of it in flight; the number moved across the calls of this drain. */
  private async empty(shadow: string, target: string, who: string): Promise<Step<number>> {
    const url = this.urlOf(shadow);
    const counts = await readCounts(this.client, url);
    if (counts === NO_QUEUE) return { ok: true, value: this.moves.get(shadow) ?? 0 };
    if (counts.inFlight > 0) {
      return {
        ok: false,
        outcome: pending(
          'consumers-attached',
          `${shadow} has ${counts.inFlight} messages in flight: ${who} still holds them`,
          2_000,
        ),
      };
    }
    const toSource = target === this.sourceUrl;
    const moved = await moveAll({
      client: this.client,
      from: url,
      to: toSource ? target : this.urlOf(target),
      // Handback ids are new (the source saw its own within 5 minutes and would drop them),
      // stable across a retried move: derived from the activation and the moved message.
      ...(this.fifo
        ? {
            dedupId: (m: Message) =>
              `qs-${toSource ? 'back' : 'drain'}-${this.activationTag}-${m.MessageId ?? ''}`,
          }
        : {}),
      visibilitySeconds: Math.max(30, this.timing.pumpVisibilitySeconds),
      fenceHeld: () => this.fence.held,
      onMoved: () => this.moves.set(shadow, (this.moves.get(shadow) ?? 0) + 1),
    });
    if (!moved) return { ok: false, outcome: pending('fenced', 'the fence was lost during a move', 2_000) };
    return { ok: true, value: this.moves.get(shadow) ?? 0 };
  }

  /** `pending` unless `shadow` shows nothing visible, in flight or delayed over a whole window. */
  private async proveEmpty(shadow: string): Promise<Outcome<never> | undefined> {
    const proof = await proveStable(
      this.client,
      this.urlOf(shadow),
      isEmpty,
      this.windowMs(),
      this.timing.pollIntervalMs,
    );
    if (proof.ok) return undefined;
    const code = proof.counts.inFlight > 0 && proof.counts.visible === 0 ? 'consumers-attached' : 'backlog';
    return pending(code, `${shadow} has ${describeCounts(proof.counts)}`, 1_000);
  }

  /** docs/design.md §5.4: a shadow is deleted only after nothing publishes to it and it proved
   * empty over a whole window; SQS has no conditional delete, so the last read is right before it. */
  private async remove(
    shadow: string,
    routeId: string | undefined,
  ): Promise<Step<{ deleted: string[]; retained: RetainedResource[] }>> {
    const isApp = shadow === this.config.appShadow;
    const selectable = this.pump.active && (isApp || this.view.table.routes.some((r) => r.shadow === shadow));
    if (selectable) {
      return { ok: false, outcome: pending('in-flight', `${shadow} is kept: the pump may still copy to it`) };
    }
    if (this.view.barrier.pendingBelow(isApp ? Number.MAX_SAFE_INTEGER : this.view.table.generation) > 0) {
      return {
        ok: false,
        outcome: pending('in-flight', `${shadow} is kept: copies selected for it are still open`),
      };
    }
    const url = this.urlOf(shadow);
    const proof = await proveStable(this.client, url, isEmpty, this.windowMs(), this.timing.pollIntervalMs);
    if (!proof.ok) {
      return {
        ok: false,
        outcome: pending('backlog', `${shadow} is kept: it has ${describeCounts(proof.counts)}`),
      };
    }
    if (proof.missing) return { ok: true, value: { deleted: [], retained: [] } };
    await this.deps.hooks?.beforeShadowDelete?.({ shadow });
    const last = await readCounts(this.client, url);
    if (last !== NO_QUEUE && !isEmpty(last)) {
      return { ok: false, outcome: pending('backlog', `${shadow} is kept: it has ${describeCounts(last)}`) };
    }
    if (last === NO_QUEUE) return { ok: true, value: { deleted: [], retained: [] } };
    await this.client.send(new DeleteQueueCommand({ QueueUrl: url })).catch((err: unknown) => {
      if (!isQueueMissing(err)) throw err;
    });
    this.log.info('shadow.deleted', { shadow, ...(routeId ? { routeId } : {}) });
    this.view.retain(shadow, []);
    return { ok: true, value: { deleted: [shadow], retained: [] } };
  }
}
