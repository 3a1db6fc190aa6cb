// One workload's state document in its state ConfigMap, with the desired document beside it:
// read and checked against the seal, written sealed first and conditionally (by
// resourceVersion), and removed after the handback. It keeps what the last write was, so a
// document someone else changed is told apart from ours. The coordinator decides what to write.
import { DESIRED_KEY, STATE_KEY } from '../../core/agentProtocol';
import type { KubernetesObjectNames } from '../../core/names';
import { parseState, serializeState, type SplitState } from '../../core/state/stateDocument';
import { formatFieldError } from '../../core/result';
import { isConflict } from '../kube/client';
import type { ConfigMapStore } from '../kube/configMaps';
import type { Logger } from '../log';
import { stateDigest, type StateSeals } from './stateSeal';

type Names = Pick<KubernetesObjectNames, 'stateConfigMap' | 'stateSeal'>;

/** What reading the state ConfigMap found. */
export type ReadState =
  | { kind: 'absent' }
  | { kind: 'loaded'; state: SplitState }
  /** A ConfigMap whose state does not parse. */
  | { kind: 'unreadable'; problem: string }
  /** A state this controller did not write: no seal at all, or not listed in it. */
  | { kind: 'unsealed'; seal: 'absent' | 'other'; text: string };

export class StateStore {
  /** resourceVersion of the ConfigMap as last read or written; undefined: create it. */
  private version: string | undefined;
  /** The state text last written or loaded: a different one in the ConfigMap was not ours. */
  private lastState = '';
  /** The desired document last written ('' before the first). */
  private lastDesired = '';
  /** The desired document the ConfigMap holds as this store last wrote it; undefined: unknown. */
  private writtenDesired: string | undefined;
  /** The digest of the desired document the seal lists; undefined: read the seal. */
  private sealedDesired: string | undefined;

  constructor(
    private readonly store: ConfigMapStore,
    private readonly seals: StateSeals,
    /** The workload's name, for the ConfigMap's labels and the seal. */
    private readonly workloadName: string,
    private readonly log: Logger,
  ) {}

  async read(names: Names): Promise<ReadState> {
    const doc = await this.store.read(names.stateConfigMap);
    if (!doc) return { kind: 'absent' };
    const text = doc.data[STATE_KEY] ?? '';
    const parsed = parseState(text);
    if (!parsed.ok) return { kind: 'unreadable', problem: parsed.errors.map(formatFieldError).join('; ') };
    const sealed = await this.seals.verify(names.stateSeal, text);
    if (sealed !== 'sealed')
      return { kind: 'unsealed', seal: sealed === 'absent' ? 'absent' : 'other', text };
    this.version = doc.resourceVersion;
    // The text as found, not re-serialised: the seal lists digests of exactly what was written.
    this.lastState = text;
    return { kind: 'loaded', state: parsed.value };
  }

  /** The command an operator runs to seal a state document found without a seal. */
  resealCommand(names: Names, text: string): string {
    return this.seals.resealCommand(names.stateSeal, text, this.workloadName);
  }

  /** A new state: its ConfigMap is created by the next write. */
  startNew(): void {
    this.version = undefined;
  }

  /** Writes the state (with the last desired document), sealed first. */
  async persist(names: Names, state: SplitState): Promise<void> {
    const text = serializeState(state);
    // Already written as it is (the desired document's write carried a pass's state): nothing to do.
    if (this.version !== undefined && text === this.lastState && this.lastDesired === this.writtenDesired)
      return;
    // Sealed first: a crash between the two writes leaves a state (and a desired document) the
    // seal still lists.
    this.sealedDesired ??= await this.seals.newestDesired(names.stateSeal);
    await this.seals.seal(
      names.stateSeal,
      { next: text, current: this.lastState, desired: this.lastDesired, sealedDesired: this.sealedDesired },
      this.workloadName,
    );
    const write = () =>
      this.store.write(
        names.stateConfigMap,
        {
          [STATE_KEY]: text,
          ...(this.lastDesired ? { [DESIRED_KEY]: this.lastDesired } : {}),
        },
        {
          labels: { 'queuesplit.dev/state': 'true', 'queuesplit.dev/workload': this.workloadName },
          resourceVersion: this.version,
        },
      );
    try {
      this.version = await write();
    } catch (err) {
      if (!isConflict(err)) throw err;
      // Someone else wrote the ConfigMap. If our state in it is unchanged they edited only
      // the desired document (which the agent checks): ours replaces it. Otherwise another
      // writer changed the state itself, and the conflict stands.
      const current = await this.store.read(names.stateConfigMap);
      if (!current || current.data[STATE_KEY] !== this.lastState) throw err;
      this.log.warn('state.tampered', { configMap: names.stateConfigMap });
      this.version = current.resourceVersion;
      this.version = await write();
    }
    this.lastState = text;
    this.writtenDesired = this.lastDesired;
    this.sealedDesired = this.lastDesired ? stateDigest(this.lastDesired) : '';
  }

  /** Writes the desired document (and the state with it) when it changed. */
  async writeDesired(names: Names, state: SplitState, desired: string): Promise<void> {
    if (desired === this.lastDesired) return;
    this.lastDesired = desired;
    await this.persist(names, state);
  }

  /** The desired document in the ConfigMap is not the one this controller wrote: write it again. */
  async restoreDesired(
    names: Names,
    state: SplitState,
    computeDesired: () => Promise<string>,
  ): Promise<void> {
    const doc = await this.store.read(names.stateConfigMap);
    if (!doc) return;
    const desired = await computeDesired();
    const intact = doc.data[DESIRED_KEY] === desired && doc.data[STATE_KEY] === this.lastState;
    // Intact but unsealed (a seal from before desired documents were sealed): seal it again.
    if (intact && (await this.seals.listsDesired(names.stateSeal, desired))) return;
    if (!intact) this.log.warn('state.tampered', { configMap: names.stateConfigMap });
    this.lastDesired = desired;
    this.writtenDesired = undefined; // what the ConfigMap holds is not ours: write it whatever it says
    this.version = doc.resourceVersion;
    await this.persist(names, state);
  }

  /** The state is no longer this controller's to write (its namespace is going away). */
  forget(): void {
    this.version = undefined;
    this.lastDesired = '';
    this.sealedDesired = undefined;
  }

  /** The handback finished: the state document and its seal go. */
  async remove(names: Names): Promise<void> {
    await this.store.remove(names.stateConfigMap);
    await this.seals.remove(names.stateSeal);
    this.forget();
    this.lastState = '';
  }
}
