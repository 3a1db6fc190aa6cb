// The queue-agent acts on a desired document only if its seal lists it (README "Trust
// boundaries"). The document lives in the tenant namespace, where anyone with ConfigMap write
// could swap in their own secret hash, a `{}` filter or another source; the seal lives in the
// controller's namespace, which tenants cannot write, and this agent may read only its own.
import { describeError } from '../log';
import { statusCode } from '../kube/client';
import type { ConfigMapStore } from '../kube/configMaps';
import { DESIRED_DIGESTS_KEY, sealLists } from '../kube/sealDocument';

/** The seal was read and the document is listed; or it changed while it was being checked. */
export type SealCheck = undefined | 'changed' | { refused: string };

export class DesiredSeal {
  /** The last text found listed: a document is checked once, not on every pass. */
  private verified = '';

  constructor(
    private readonly store: Pick<ConfigMapStore, 'namespace' | 'read'>,
    private readonly name: string,
  ) {}

  private get ref(): string {
    return `ConfigMap ${this.store.namespace}/${this.name}`;
  }

  /**
   * Whether `text` is a desired document the controller sealed. `reread` reads the document
   * again: the controller seals before it writes, so a document that changed between the two
   * reads is simply read again, never refused.
   */
  async check(text: string, reread: () => Promise<string | undefined>): Promise<SealCheck> {
    if (text === this.verified) return undefined;
    let data: Record<string, string> | undefined;
    try {
      data = (await this.store.read(this.name))?.data;
    } catch (err) {
      // Other errors (5xx, timeouts) fail the pass and are retried; a refusal is for good.
      if (statusCode(err) !== 403) throw err;
      return {
        refused: `its seal ${this.ref} cannot be read (${describeError(err)}); the controller grants that with a Role of the same name in its namespace`,
      };
    }
    if (data && sealLists(data, DESIRED_DIGESTS_KEY, text)) {
      this.verified = text;
      return undefined;
    }
    if ((await reread()) !== text) return 'changed';
    return {
      refused: data
        ? `the desired document is not one the controller wrote: its digest is not in the seal ${this.ref}`
        : `the desired document has no seal: ${this.ref} does not exist`,
    };
  }
}
