// What a pass derives from each cached object (a QueueSplit's validation, a state document's
// parse), kept while the object's resourceVersion is unchanged: with 1,000 splits a pass would
// otherwise validate every one of them again each time any one changed (docs/design.md §6, "What
// the controller reads and writes").
interface Versioned {
  metadata?: { uid?: string; namespace?: string; name?: string; resourceVersion?: string };
}

export class VersionMemo<O extends Versioned, T> {
  private entries = new Map<string, { version: string; value: T }>();

  constructor(private readonly derive: (object: O) => T) {}

  /** The derived value of each object, in order; objects no longer given are forgotten. */
  map(objects: readonly O[]): T[] {
    const next = new Map<string, { version: string; value: T }>();
    const values = objects.map((object) => {
      const m = object.metadata;
      const key = m?.uid ?? `${m?.namespace ?? ''}/${m?.name ?? ''}`;
      const version = m?.resourceVersion;
      const known = this.entries.get(key);
      const value =
        known !== undefined && version !== undefined && known.version === version
          ? known.value
          : this.derive(object);
      if (version !== undefined) next.set(key, { version, value });
      return value;
    });
    this.entries = next;
    return values;
  }
}
