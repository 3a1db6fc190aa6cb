// A narrow stand-in for many queue-agents at once, for the controller-at-scale benchmark: the
// real node runs at most ~25 queue-agent pods, so with 200 split workloads the controller's
// queue-agent Deployments are pinned to a node label no node has (their pods stay Pending) and
// this plays each one by the agent protocol (core/agentProtocol.ts) instead: it watches the
// state ConfigMaps, and for each desired document writes the observed document the real agent
// would once its engines succeed — every step asked of a queue done (proofs proven), every
// ATTACHING/ACTIVE route acked at its generation, every DRAINING route drained. It touches no
// broker and checks no seal: what is measured is the controller, not the engines.
import {
  CoreV1Api,
  makeInformer,
  type KubeConfig,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import {
  DESIRED_KEY,
  OBSERVED_API_VERSION,
  OBSERVED_KEY,
  STATE_KEY,
  type DesiredState,
  type ObservedQueue,
  type ObservedState,
} from '../../../core/agentProtocol';
import { kubernetesObjectNames } from '../../../core/names';
import { mergePatch } from '../../../agent/kube/client';

/** The observed document the real agent writes for `desired` once every step succeeded. */
export function observedFor(
  desired: DesiredState,
  previous: Record<string, ObservedQueue>,
): Omit<ObservedState, 'updatedAt'> {
  const queues = { ...previous };
  for (const plan of desired.queues) {
    if (plan.step === undefined) continue;
    queues[plan.name] = {
      step: plan.step,
      generation: desired.generation,
      outcome: { kind: 'done', evidence: 'agent stand-in (benchmark): no broker', kept: [] },
      health: 'ok',
      published: {},
    };
  }
  return {
    apiVersion: OBSERVED_API_VERSION,
    activationId: desired.activationId,
    observedGeneration: desired.generation,
    queues,
    routes: Object.fromEntries(
      desired.routes.map((r) => [
        r.routeId,
        {
          ackedGeneration: r.generation,
          ...(r.phase === 'DRAINING'
            ? { drained: { proven: true, evidence: 'agent stand-in (benchmark)', kept: [] } }
            : {}),
        },
      ]),
    ),
  };
}

export class AgentStandIn {
  private readonly informer: ReturnType<typeof makeInformer<KubernetesObject>>;
  private readonly core: CoreV1Api;
  /** Per state ConfigMap: the observed text last written, and its queues. */
  private readonly written = new Map<string, { text: string; queues: Record<string, ObservedQueue> }>();
  /** When each route was first acked at a generation ≥ 1 (epoch ms), by routeId. */
  readonly ackedAt = new Map<string, number>();
  /**
   * When each route first reached this process in a desired document (epoch ms), by routeId: the
   * watch event's arrival, before any tick. created → here is the controller's part of an ack
   * (and the API server's); here → acked is this stand-in's own (its ticks, its writes).
   */
  readonly desiredAt = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    kc: KubeConfig,
    private readonly namespace: string,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
    const selector = 'queuesplit.dev/state=true';
    this.informer = makeInformer<KubernetesObject>(
      kc,
      `/api/v1/namespaces/${namespace}/configmaps`,
      () => this.core.listNamespacedConfigMap({ namespace, labelSelector: selector }),
      selector,
    );
    this.informer.on('error', () => setTimeout(() => void this.informer.start(), 500));
    const arrived = (cm: KubernetesObject) => {
      const text = (cm as V1ConfigMap).data?.[DESIRED_KEY];
      if (!text) return;
      const now = Date.now();
      for (const r of (JSON.parse(text) as DesiredState).routes)
        if (!this.desiredAt.has(r.routeId)) this.desiredAt.set(r.routeId, now);
    };
    this.informer.on('add', arrived);
    this.informer.on('update', arrived);
  }

  async start(): Promise<void> {
    await this.informer.start();
    // Level-based, like the agent's own loop (it polls every 500 ms; this every 100 ms).
    this.timer = setInterval(() => void this.tick(), 100);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.informer.stop();
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const work = (this.informer.list() as V1ConfigMap[]).flatMap((cm) => {
        const text = cm.data?.[DESIRED_KEY];
        const state = cm.data?.[STATE_KEY];
        if (!text || !state) return [];
        const desired = JSON.parse(text) as DesiredState;
        const { installId, workload } = JSON.parse(state) as {
          installId: string;
          workload: { uid: string; name: string };
        };
        const key = cm.metadata!.name!;
        const before = this.written.get(key);
        const observed = observedFor(desired, before?.queues ?? {});
        const body = JSON.stringify(observed);
        if (before?.text === body) return [];
        const status = kubernetesObjectNames({
          installId,
          workloadUid: workload.uid,
          workloadName: workload.name,
        }).agentStatusConfigMap;
        return [{ key, status, body, observed }];
      });
      // Side by side, as separate agents would.
      let next = 0;
      const worker = async () => {
        while (next < work.length) {
          const w = work[next++]!;
          try {
            await this.core.patchNamespacedConfigMap(
              {
                name: w.status,
                namespace: this.namespace,
                body: {
                  data: {
                    [OBSERVED_KEY]: JSON.stringify({ ...w.observed, updatedAt: new Date().toISOString() }),
                  },
                },
              },
              mergePatch,
            );
          } catch {
            continue; // its ConfigMap is not created yet: the next tick writes it
          }
          this.written.set(w.key, { text: w.body, queues: w.observed.queues });
          const now = Date.now();
          for (const [routeId, r] of Object.entries(w.observed.routes))
            if (r.ackedGeneration >= 1 && !this.ackedAt.has(routeId)) this.ackedAt.set(routeId, now);
        }
      };
      await Promise.all(Array.from({ length: Math.min(16, work.length) }, worker));
    } finally {
      this.busy = false;
    }
  }
}
