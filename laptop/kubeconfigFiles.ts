// Reads kubeconfig files into one KubeConfig with kubectl's merge (core/kubeconfig.ts says how it
// differs from @kubernetes/client-node's own): used by the extension and by the sidecar, so both
// see the same contexts as `kubectl config get-contexts` does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KubeConfig, type Cluster, type Context, type User } from '@kubernetes/client-node';
import { mergeKubeconfigs, type KubeconfigParts } from '../core/kubeconfig';

export interface LoadedKubeconfig {
  kc: KubeConfig;
  /** Listed files that do not exist (skipped, as kubectl does). */
  missing: string[];
}

/** Why a kubeconfig could not be read, naming the file. */
export class KubeconfigLoadError extends Error {}

function readOne(file: string, mustExist: boolean): KubeconfigParts<Cluster, User, Context> | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !mustExist) return undefined;
    throw new KubeconfigLoadError(
      code === 'ENOENT' ? `${file} does not exist` : `cannot read ${file}: ${(err as Error).message}`,
    );
  }
  // An empty file is an empty config to kubectl (client-node's parser throws on it).
  if (text.trim() === '') return { clusters: [], users: [], contexts: [] };
  const one = new KubeConfig();
  try {
    one.loadFromString(text);
    // Relative certificate and key paths are relative to the file that names them.
    one.makePathsAbsolute(path.dirname(path.resolve(file)));
  } catch (err) {
    throw new KubeconfigLoadError(`${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return {
    clusters: one.getClusters(),
    users: one.getUsers(),
    contexts: one.getContexts(),
    currentContext: one.getCurrentContext(),
  };
}

/**
 * The merged kubeconfig of `files` (precedence order). `explicit`: a single file that must exist
 * (kubectl --kubeconfig); otherwise missing files are skipped and listed in `missing`.
 */
export function loadKubeconfigFiles(source: {
  files: readonly string[];
  explicit: boolean;
}): LoadedKubeconfig {
  const parts: KubeconfigParts<Cluster, User, Context>[] = [];
  const read: string[] = [];
  const missing: string[] = [];
  for (const file of source.files) {
    const part = readOne(file, source.explicit);
    if (part === undefined) missing.push(file);
    else {
      parts.push(part);
      read.push(file);
    }
  }
  let merged;
  try {
    merged = mergeKubeconfigs(parts, read);
  } catch (err) {
    throw new KubeconfigLoadError(err instanceof Error ? err.message : String(err));
  }
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: merged.clusters,
    users: merged.users,
    contexts: merged.contexts,
    currentContext: merged.currentContext ?? '',
  });
  return { kc, missing };
}
