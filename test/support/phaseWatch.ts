// Follows one workload's state document (the controller's state ConfigMap) with a watch, so a
// test sees every phase the controller persists — including short ones polling would miss —
// and can act the moment a phase begins.
import { Watch, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { STATE_KEY } from '../../core/agentProtocol';

export interface PhaseSeen {
  phase: string;
  /** ms since the watch started */
  at: number;
}

export class PhaseWatch {
  readonly timeline: PhaseSeen[] = [];
  private readonly started = Date.now();
  private abort: AbortController | undefined;
  private stopped = false;
  private current = '';

  constructor(
    private readonly kc: KubeConfig,
    private readonly namespace: string,
    private readonly workload: string,
    /** Called once per phase change, in order; the next change waits until it settles. */
    private readonly onPhase: (phase: string) => Promise<void>,
  ) {}

  /** The phase last persisted ('' before the state document exists or after it is removed). */
  get phase(): string {
    return this.current;
  }

  start(): void {
    let chain = Promise.resolve();
    const handle = (type: string, cm: V1ConfigMap) => {
      const text = type === 'DELETED' ? undefined : cm.data?.[STATE_KEY];
      const phase = text ? String((JSON.parse(text) as { phase?: string }).phase ?? '') : '';
      if (phase === this.current) return;
      this.current = phase;
      this.timeline.push({ phase: phase || '(handed back)', at: Date.now() - this.started });
      if (phase) chain = chain.then(() => this.onPhase(phase)).catch(() => undefined);
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
