// Which kubeconfig files are read, and how several of them merge: as kubectl does it (client-go's
// clientcmd loading rules), not as @kubernetes/client-node's loadFromDefault does. The differences
// that matter (checked against client-node 1.4 and clientcmd's loader.go):
// - current-context: kubectl takes the FIRST file that sets one; client-node's mergeConfig lets
//   every later file that sets one overwrite it (so the LAST wins);
// - a cluster, user or context named in two files: kubectl keeps the first file's entry whole and
//   ignores the later one; client-node throws "Duplicate cluster: …";
// - a listed file that does not exist: kubectl skips it; client-node throws;
// - an empty file: kubectl reads it as an empty config; client-node throws;
// - the same path listed twice: kubectl reads it once.
// Only a file given on its own (kubectl's --kubeconfig; here the string form of the
// queueSplit.kubeconfig setting, or the sidecar's --kubeconfig) must exist and is not merged.
// Pure (no fs, no Kubernetes client): the extension's activation bundle uses it to know which
// files to watch, and the merge is unit-tested on plain objects.
import * as path from 'node:path';

/** Where the list of files came from, for messages. */
export type KubeconfigOrigin = 'setting' | 'kubernetes-extension' | 'env' | 'default';

export interface KubeconfigFiles {
  /** In precedence order, without duplicates; `~` expanded, relative paths resolved. */
  files: string[];
  /** One file named on its own (like kubectl --kubeconfig): it must exist; nothing is merged. */
  explicit: boolean;
  origin: KubeconfigOrigin;
}

/** One file named on its own (kubectl --kubeconfig). */
export function singleKubeconfig(file: string): KubeconfigFiles {
  return { files: [file], explicit: true, origin: 'setting' };
}

/** `~` and `~/…` (also `~\…` on Windows) → the home folder; anything else unchanged. */
export function expandHome(file: string, home: string, sep: string = path.sep): string {
  if (file === '~') return home;
  if (file.startsWith('~/') || (sep === '\\' && file.startsWith('~\\'))) {
    return home.replace(/[\\/]+$/, '') + sep + file.slice(2);
  }
  return file;
}

/** A $KUBECONFIG-style list (path.delimiter: `:`, `;` on Windows) → its non-empty paths. */
export function splitPathList(list: string, delimiter: string = path.delimiter): string[] {
  return list.split(delimiter).filter((p) => p !== '');
}

function dedupe(files: readonly string[]): string[] {
  return [...new Set(files)];
}

export interface KubeconfigInputs {
  /** queueSplit.kubeconfig as VS Code hands it: a string (one file), a list, or anything else. */
  setting: unknown;
  /** $KUBECONFIG of the extension host (or the sidecar). */
  env: string | undefined;
  home: string;
  /** The Kubernetes extension's kubeconfig path (its API's hostPath; may itself be a list). */
  kubernetesExtension?: string | undefined;
  /** Relative paths in the setting resolve against this (the first workspace folder). */
  baseDir?: string | undefined;
  /** path.delimiter and path.sep, for tests of the other platform. */
  delimiter?: string;
  sep?: string;
}

/**
 * The files to read, in kubectl's order of precedence: the queueSplit.kubeconfig setting (a
 * string: that one file, like --kubeconfig; a list: merged like $KUBECONFIG), else the Kubernetes
 * extension's kubeconfig, else $KUBECONFIG, else ~/.kube/config.
 */
export function resolveKubeconfigFiles(input: KubeconfigInputs): KubeconfigFiles {
  const sep = input.sep ?? path.sep;
  const delimiter = input.delimiter ?? path.delimiter;
  const pathApi = sep === '\\' ? path.win32 : path.posix;
  const fromSetting = (file: string): string => {
    const expanded = expandHome(file.trim(), input.home, sep);
    return input.baseDir !== undefined && !pathApi.isAbsolute(expanded)
      ? pathApi.resolve(input.baseDir, expanded)
      : expanded;
  };
  const { setting } = input;
  if (typeof setting === 'string' && setting.trim() !== '') {
    return { files: [fromSetting(setting)], explicit: true, origin: 'setting' };
  }
  if (Array.isArray(setting)) {
    const files = setting
      .filter((f): f is string => typeof f === 'string' && f.trim() !== '')
      .map(fromSetting);
    if (files.length > 0) return { files: dedupe(files), explicit: false, origin: 'setting' };
  }
  const fromList = (list: string): string[] =>
    dedupe(splitPathList(list, delimiter).map((f) => expandHome(f, input.home, sep)));
  if (input.kubernetesExtension !== undefined && input.kubernetesExtension.trim() !== '') {
    const files = fromList(input.kubernetesExtension.trim());
    if (files.length > 0) return { files, explicit: false, origin: 'kubernetes-extension' };
  }
  if (input.env !== undefined && input.env !== '') {
    const files = fromList(input.env);
    if (files.length > 0) return { files, explicit: false, origin: 'env' };
  }
  return {
    files: [pathApi.join(input.home, '.kube', 'config')],
    explicit: false,
    origin: 'default',
  };
}

/** How the files are named in messages: "a (queueSplit.kubeconfig)", "a:b ($KUBECONFIG)". */
export function describeKubeconfigFiles(source: KubeconfigFiles, delimiter: string = path.delimiter): string {
  const list = source.files.join(delimiter);
  switch (source.origin) {
    case 'setting':
      return `${list} (queueSplit.kubeconfig)`;
    case 'kubernetes-extension':
      return `${list} (the Kubernetes extension's kubeconfig)`;
    case 'env':
      return `${list} ($KUBECONFIG)`;
    case 'default':
      return list;
  }
}

export interface Named {
  name: string;
}

/** One file's clusters, users and contexts as read (any shape with names). */
export interface KubeconfigParts<C extends Named = Named, U extends Named = Named, X extends Named = Named> {
  clusters: C[];
  users: U[];
  contexts: X[];
  /** current-context; '' or undefined: the file sets none. */
  currentContext?: string | undefined;
}

export class KubeconfigMergeError extends Error {}

/**
 * kubectl's merge of files in precedence order: the first file that sets current-context
 * decides it; the first file that defines a name keeps that entry whole (a later entry of the
 * same name is ignored, not merged field by field). A name twice in ONE file is an error, as
 * kubectl says ("duplicate name … in list"). `files` names the parts for that message.
 */
export function mergeKubeconfigs<C extends Named, U extends Named, X extends Named>(
  parts: readonly KubeconfigParts<C, U, X>[],
  files: readonly string[] = [],
): KubeconfigParts<C, U, X> {
  const merged: KubeconfigParts<C, U, X> = { clusters: [], users: [], contexts: [] };
  const kinds = ['clusters', 'users', 'contexts'] as const;
  const seen = { clusters: new Set<string>(), users: new Set<string>(), contexts: new Set<string>() };
  parts.forEach((part, i) => {
    for (const kind of kinds) {
      const inFile = new Set<string>();
      for (const entry of part[kind] as Named[]) {
        if (inFile.has(entry.name)) {
          throw new KubeconfigMergeError(
            `${files[i] ?? `kubeconfig #${i + 1}`} names ${kind.slice(0, -1)} "${entry.name}" twice`,
          );
        }
        inFile.add(entry.name);
        if (seen[kind].has(entry.name)) continue;
        seen[kind].add(entry.name);
        (merged[kind] as Named[]).push(entry);
      }
    }
    if (!merged.currentContext && part.currentContext) merged.currentContext = part.currentContext;
  });
  return merged;
}
