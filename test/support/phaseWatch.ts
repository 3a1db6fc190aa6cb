// Follows one workload's state document (the controller's state ConfigMap) with a watch, so a
// test sees every phase the controller persists — including short ones polling would miss —
// and can act the moment a phase begins.
import { Watch, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { STATE_KEY } from '../../core/agentProtocol';
import { pollUntil } from './poll';

export interface PhaseSeen {
  phase: string;
  /** ms since the watch started */
  at: number;
}

/** Labels for what a state document shows: its workload phase and `route:<PHASE>` per route. */
function labelsOf(text: string | undefined): { phase: string; labels: Set<string> } {
  if (!text) return { phase: '', labels: new Set() };
  const doc = JSON.parse(text) as { phase?: string; routes?: { phase?: string }[] };
  const phase = String(doc.phase ?? '');
  return { phase, labels: new Set([phase, ...(doc.routes ?? []).map((r) => `route:${r.phase}`)]) };
}

export class PhaseWatch {
  readonly timeline: PhaseSeen[] = [];
  private readonly started = Date.now();
  private abort: AbortController | undefined;
  private stopped = false;
  private current = '';
  private labels = new Set<string>();

  constructor(
    private readonly kc: KubeConfig,
    private readonly namespace: string,
    private readonly workload: string,
    /** Called for each phase or route phase (`route:ATTACHING`) as it appears, in order; the next
     * call waits until the previous one settles. */
    private readonly onPhase: (label: string) => Promise<void>,
  ) {}

  /** The workload phase last persisted ('' before the state document exists or after removal). */
  get phase(): string {
    return this.current;
  }

  /** Whether the last persisted document still shows `label` (a phase or `route:<PHASE>`). */
  shows(label: string): boolean {
    return this.labels.has(label);
  }

  /** Waits until the state document is removed: the workload is IDLE again. */
  async untilRemoved(timeoutMs: number): Promise<void> {
    await pollUntil(
      `the state document of ${this.workload} is removed (IDLE)`,
      async () => this.current,
      (p) => p === '',
      timeoutMs,
    );
  }

  start(): void {
    let chain = Promise.resolve();
    const handle = (type: string, cm: V1ConfigMap) => {
      const { phase, labels } = labelsOf(type === 'DELETED' ? undefined : cm.data?.[STATE_KEY]);
      const appeared = [...labels].filter((l) => l && !this.labels.has(l));
      this.labels = labels;
      if (phase !== this.current) {
        this.current = phase;
        this.timeline.push({ phase: phase || '(handed back)', at: Date.now() - this.started });
      }
      for (const label of appeared) chain = chain.then(() => this.onPhase(label)).catch(() => undefined);
    };
    const connect = async () => {
      if (this.stopped) return;
      this.abort = await new Watch(this.kc).watch(
        `/api/v1/namespaces/${this.namespace}/configmaps`,
        { labelSelector: `queuesplit.dev/state=true,queuesplit.dev/workload=${this.workload}` },
        (type: string, obj: V1ConfigMap) => handle(type, obj),
        // A watch ends now and then (server timeout); resume it. A missed event is only a
        // missed kill opportunity, which the caller's accounting notices.
        () => void setTimeout(() => void connect(), 100),
      );
    };
    void connect();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  describe(): string {
    return this.timeline.map((s) => `${(s.at / 1000).toFixed(1)}s ${s.phase}`).join(' → ');
  }
}
