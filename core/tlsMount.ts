// Where the queue-agent pod finds a TLS CA bundle a declaration names (`tls.caSecret` /
// `tls.caKey`): the controller mounts exactly that Secret key there, read-only, and the agent
// reads the file. One definition, so the mount and the reader can never disagree.
import type { TlsBlock } from './queueConfig/blocks';

export const TLS_MOUNT_ROOT = '/var/run/queuesplit/tls';

/** The directory a CA Secret's mounted keys appear in. */
export function tlsMountDir(secret: string): string {
  return `${TLS_MOUNT_ROOT}/${secret}`;
}

/** The CA bundle file of `tls`, or undefined when it trusts the system CAs. */
export function caFilePath(tls: TlsBlock | undefined): string | undefined {
  return tls?.caSecret && tls.caKey ? `${tlsMountDir(tls.caSecret)}/${tls.caKey}` : undefined;
}
