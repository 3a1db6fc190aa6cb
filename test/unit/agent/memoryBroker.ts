// An in-memory broker port for the engine kernel's tests: queues are arrays, the pump copies
// what `publish` puts on the source to the shadow the kernel selects, and a test can hold a
// copy's acknowledgement open (the publish barrier), make any broker call throw, or lose the
// fence. It does what a port must do and nothing a real broker's port would hide.
import { z } from 'zod';
import { MessageView, type MessageHeaders } from '../../../core/filter';
import {
  checkpointCodec,
  filterSchema,
  phaseSchema,
  retainedSchema,
} from '../../../agent/engine/checkpointCodec';
import type {
  Checkpoint,
  EngineCondition,
  HandoffData,
  Outcome,
  PrepareResult,
  RetainedResource,
  RouteSpec,
  ShadowLag,
} from '../../../agent/engine/contract';
import { EngineKernel } from '../../../agent/engine/kernel';
import { silentLogger, type Logger } from '../../../agent/log';
import { degraded, pending } from '../../../agent/engine/outcome';
import type {
  Blocked,
  BrokerPort,
  EngineView,
  KernelState,
  RemovedRoute,
  Step,
} from '../../../agent/engine/port';

export interface MemoryState extends KernelState<RemovedRoute> {
  readonly activationId: string;
  readonly source: string;
}

const schema = z.object({
  activationId: z.string(),
  source: z.string(),
  phase: phaseSchema,
  generation: z.number().int().nonnegative(),
  routes: z.array(z.object({ routeId: z.string(), filter: filterSchema, shadow: z.string() })),
  removed: z.array(z.object({ routeId: z.string(), shadow: z.string() })),
  retained: retainedSchema,
});
const codec = checkpointCodec<MemoryState>('memory', 1, schema, (s) => s);

export interface Message {
  readonly id: string;
  readonly headers: MessageHeaders;
}

/** The broker itself, shared by the engines of one test (a restart keeps the queues). */
export class MemoryBroker {
  readonly queues = new Map<string, Message[]>();
  /** Every port call by name, in order. */
  readonly calls: string[] = [];
  /** Makes the next broker call throw this. */
  failNext: Error | undefined;
  /** Copies stay unacknowledged (the barrier holds them) until `ackAll`. */
  holdAcks = false;
  fenceLost = false;
  /** Shadows whose removal keeps them (as RabbitMQ quorum queues are kept). */
  readonly keepOnRemove = new Set<string>();
  private readonly open: (() => void)[] = [];

  constructor(readonly source = 'orders') {
    this.queues.set(source, []);
  }

  publish(...messages: Message[]): void {
    this.queues.get(this.source)!.push(...messages);
  }

  ids(queue: string): string[] {
    return (this.queues.get(queue) ?? []).map((m) => m.id);
  }

  ackAll(): void {
    for (const release of this.open.splice(0)) release();
  }

  /** A broker operation: recorded, and failing when the test asked it to. */
  call(name: string): void {
    this.calls.push(name);
    const err = this.failNext;
    if (err) {
      this.failNext = undefined;
      throw err;
    }
  }

  hold(release: () => void): void {
    if (this.holdAcks) this.open.push(release);
    else release();
  }
}

class MemoryPort implements BrokerPort<RemovedRoute, MemoryState> {
  readonly provider = 'memory';
  readonly epoch = 1;
  readonly appShadow: string;
  readonly stepTimeoutMs = 200;
  readonly reservedNames: readonly string[];
  readonly inFlight = { what: 'copies', awaits: 'ack' };
  readonly codec = codec;
  private pumping = false;
  private stoppedAt: number | null = null;

  constructor(
    private readonly broker: MemoryBroker,
    private readonly view: EngineView<RemovedRoute>,
    readonly activationId: string,
  ) {
    this.appShadow = `${broker.source}-app`;
    this.reservedNames = [broker.source];
  }

  /** Copies everything on the source to the selected shadows (while the pump runs). */
  pump(): void {
    if (!this.pumping) return;
    const source = this.broker.queues.get(this.broker.source)!;
    for (const message of source.splice(0)) {
      const selection = this.view.select(new MessageView(message.headers));
      const release = this.view.barrier.track(selection.generation);
      this.queue(selection.destination).push(message);
      this.view.countPublished(selection.routeId);
      this.broker.hold(release);
    }
  }

  lostFence(): Outcome<never> | undefined {
    return this.broker.fenceLost
      ? degraded('fenced', 'a newer engine holds the fence', 'stop the other one')
      : undefined;
  }

  describeFailure(err: unknown) {
    const reason = err instanceof Error ? err.message : String(err);
    return { fields: { error: reason }, reason };
  }

  async prepare(): Promise<Step<PrepareResult>> {
    this.broker.call('prepare');
    this.queue(this.appShadow);
    return { ok: true, value: this.prepared() };
  }

  prepared(): PrepareResult {
    return { sourceKind: 'memory', shadows: [this.appShadow], warnings: [] };
  }

  async start(): Promise<Blocked> {
    this.broker.call('start');
    this.pumping = true;
    this.stoppedAt = null;
    return undefined;
  }

  async resume(): Promise<Blocked> {
    this.broker.call('resume');
    this.pumping = true;
    return undefined;
  }

  async up(): Promise<Blocked> {
    this.broker.call('up');
    return undefined;
  }

  async stop(): Promise<Step<undefined>> {
    this.broker.call('stop');
    this.pumping = false;
    this.stoppedAt ??= this.broker.calls.length;
    return { ok: true, value: undefined };
  }

  handoff(): HandoffData {
    return { provider: 'memory', data: { activationId: this.activationId, stoppedAt: this.stoppedAt } };
  }

  checkRoutes(routes: readonly RouteSpec[]) {
    return routes
      .map((r, i) => ({ r, i }))
      .filter(({ r }) => r.shadow.includes(' '))
      .map(({ i }) => ({ path: `routes[${i}].shadow`, problem: 'has a space', fix: 'name it without' }));
  }

  async addRoutes(added: readonly { route: RouteSpec; returning: boolean }[]): Promise<Blocked> {
    this.broker.call(
      `addRoutes ${added.map((a) => `${a.route.routeId}${a.returning ? '(returning)' : ''}`).join(',')}`,
    );
    for (const { route } of added) this.queue(route.shadow);
    return undefined;
  }

  removedRoute(route: RouteSpec): RemovedRoute {
    return { routeId: route.routeId, shadow: route.shadow };
  }

  recordedRoute(spec: RouteSpec): RemovedRoute | undefined {
    return spec.shadow ? { routeId: spec.routeId, shadow: spec.shadow } : undefined;
  }

  async drainRoute(
    route: RemovedRoute,
  ): Promise<Step<{ moved: number; deleted: string[]; retained: RetainedResource[] }>> {
    this.broker.call(`drainRoute ${route.routeId}`);
    const residue = this.broker.queues.get(route.shadow) ?? [];
    this.queue(this.appShadow).push(...residue);
    const kept = this.remove(route.shadow, route.routeId);
    return {
      ok: true,
      value: { moved: residue.length, deleted: kept.length > 0 ? [] : [route.shadow], retained: kept },
    };
  }

  async abort() {
    this.broker.call('abort');
    this.pumping = false;
    let restored = 0;
    for (const shadow of [...this.view.table.routes.map((r) => r.shadow), this.appShadow]) {
      const back = this.broker.queues.get(shadow)?.splice(0) ?? [];
      this.broker.queues.get(this.broker.source)!.push(...back);
      restored += back.length;
    }
    return { ok: true as const, value: { restored } };
  }

  async drainApplication(): Promise<Blocked> {
    this.broker.call('drainApplication');
    const left = this.broker.queues.get(this.appShadow)?.length ?? 0;
    return left === 0 ? undefined : pending('backlog', `${left} messages in the application shadow`);
  }

  async commitHandoff() {
    this.broker.call('commitHandoff');
    return { ok: true as const, value: { moved: 0 } };
  }

  async verifyCleanupReady() {
    this.broker.call('verifyCleanupReady');
    return {
      ok: true as const,
      value: { shadows: [...this.broker.queues.keys()].filter((q) => q !== this.broker.source) },
    };
  }

  async cleanup() {
    this.broker.call('cleanup');
    const deleted: string[] = [];
    for (const shadow of [...this.broker.queues.keys()].filter((q) => q !== this.broker.source)) {
      if (this.remove(shadow, undefined).length === 0) deleted.push(shadow);
    }
    return { ok: true as const, value: { deleted } };
  }

  checkpointState(kernel: KernelState<RemovedRoute>): MemoryState {
    return { activationId: this.activationId, source: this.broker.source, ...kernel };
  }

  get identity(): Partial<MemoryState> {
    return { activationId: this.activationId, source: this.broker.source };
  }

  restore(): void {}

  conditions(): EngineCondition[] {
    return [];
  }

  get connected(): boolean {
    return true;
  }

  get retrying(): number {
    return 0;
  }

  async sourceBacklog(): Promise<number | undefined> {
    return this.broker.queues.get(this.broker.source)?.length ?? 0;
  }

  /** Consumers a test attached to the application shadow (the memory broker has no consumers). */
  consumerCount: number | undefined = undefined;

  async appConsumers(): Promise<number | undefined> {
    return this.consumerCount;
  }

  async shadowLag(): Promise<ShadowLag> {
    return { app: this.broker.queues.get(this.appShadow)?.length ?? 0 };
  }

  async close(): Promise<void> {
    this.pumping = false;
  }

  private queue(name: string): Message[] {
    let queue = this.broker.queues.get(name);
    if (!queue) this.broker.queues.set(name, (queue = []));
    return queue;
  }

  private remove(shadow: string, routeId: string | undefined): RetainedResource[] {
    if (!this.broker.keepOnRemove.has(shadow)) {
      this.broker.queues.delete(shadow);
      return [];
    }
    const kept: RetainedResource[] = [
      {
        kind: 'shadow',
        name: shadow,
        ...(routeId ? { routeId } : {}),
        reason: 'kept on purpose',
        verifiedEmptyAt: '2026-01-01T00:00:00.000Z',
      },
    ];
    this.view.retain(shadow, kept);
    return kept;
  }
}

/** An engine of the kernel on the memory broker; `pump()` copies what is on the source. */
export class MemoryEngine extends EngineKernel<RemovedRoute, MemoryState> {
  readonly pump: () => void;

  constructor(broker: MemoryBroker, activationId = 'act-1', log: Logger = silentLogger) {
    let port: MemoryPort | undefined;
    super((view) => (port = new MemoryPort(broker, view, activationId)), log);
    this.pump = () => port!.pump();
  }
}

/** A checkpoint of the memory engine in `phase`, as a previous agent would have written it. */
export function checkpointIn(
  phase: MemoryState['phase'],
  more: Partial<MemoryState> = {},
  broker: MemoryBroker = new MemoryBroker(),
): Checkpoint {
  return codec.encode({
    activationId: 'act-1',
    source: broker.source,
    phase,
    generation: 0,
    routes: [],
    removed: [],
    retained: [],
    ...more,
  });
}
