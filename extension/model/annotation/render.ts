// What "Write Queue Config Annotation…" shows and hands out: the workload as YAML before and
// after (the two sides of the diff), the merge patch it applies, and the patch it copies for
// kubectl or a GitOps repository.
import * as l10n from '@vscode/l10n';
import { stringify } from 'yaml';
import { QUEUE_CONFIG_ANNOTATION } from '../../../core/queueConfig/schema';

export interface WorkloadRef {
  kind: 'Deployment' | 'StatefulSet';
  name: string;
  namespace: string;
  context: string;
}

/** kubectl's resource for a kind. */
const resourceOf = (kind: WorkloadRef['kind']) => (kind === 'Deployment' ? 'deployment' : 'statefulset');

/** A plain copy of an API object: dates as the API writes them (whole seconds), no class instances. */
function plain(object: unknown): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(object, (_key, value: unknown) =>
      typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/.test(value)
        ? value.replace('.000Z', 'Z')
        : value,
    ),
  ) as Record<string, unknown>;
}

/**
 * The workload as YAML, as `kubectl get -o yaml` would show it without `status` and
 * `metadata.managedFields`; with `annotation`, its queue-config annotation set to it (in place
 * when it has one, else last). Both sides of the diff are made here so that they differ only there.
 */
export function workloadYaml(ref: WorkloadRef, live: object, annotation?: string): string {
  const copy = plain(live);
  delete copy.status;
  const metadata = { ...(copy.metadata as Record<string, unknown> | undefined) };
  delete metadata.managedFields;
  if (annotation !== undefined) {
    const annotations = { ...(metadata.annotations as Record<string, string> | undefined) };
    annotations[QUEUE_CONFIG_ANNOTATION] = annotation;
    metadata.annotations = annotations;
  }
  const ordered = {
    apiVersion: copy.apiVersion ?? 'apps/v1',
    kind: copy.kind ?? ref.kind,
    metadata,
    ...Object.fromEntries(
      Object.entries(copy).filter(([k]) => !['apiVersion', 'kind', 'metadata'].includes(k)),
    ),
  };
  const header = comments([
    `${ref.kind} ${ref.name}`,
    l10n.t('namespace {0}, context {1}', ref.namespace, ref.context),
    l10n.t('read-only; status and metadata.managedFields are left out'),
  ]);
  return `${header}\n${stringify(ordered, { lineWidth: 0 })}`;
}

/** The merge patch that writes the annotation and nothing else. */
export function annotationPatch(text: string): { metadata: { annotations: Record<string, string> } } {
  return { metadata: { annotations: { [QUEUE_CONFIG_ANNOTATION]: text } } };
}

/** A word for a POSIX shell, single-quoted. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The kubectl command that applies the annotation (a JSON merge patch, on one line). */
export function kubectlPatchCommand(ref: WorkloadRef, text: string): string {
  return [
    'kubectl',
    '--context',
    shellQuote(ref.context),
    '--namespace',
    shellQuote(ref.namespace),
    'patch',
    resourceOf(ref.kind),
    shellQuote(ref.name),
    '--type',
    'merge',
    '--patch',
    shellQuote(JSON.stringify(annotationPatch(text))),
  ].join(' ');
}

/**
 * What "Copy as Patch" puts on the clipboard: a YAML merge patch that is also the snippet for the
 * workload's manifest in a GitOps repository, with the kubectl command that applies it in its
 * comments.
 */
export function clipboardPatch(ref: WorkloadRef, text: string): string {
  const lines = comments([
    l10n.t(
      'The {0} annotation of {1} {2} (namespace {3}),',
      QUEUE_CONFIG_ANNOTATION,
      ref.kind,
      ref.name,
      ref.namespace,
    ),
    l10n.t('proposed by "Queue Split: Write Queue Config Annotation…".'),
    l10n.t("GitOps: merge the metadata below into the {0}'s manifest. Or apply it with kubectl:", ref.kind),
    `  ${kubectlPatchCommand(ref, text)}`,
    l10n.t(
      '(or save this file and: {0})',
      `kubectl -n ${shellQuote(ref.namespace)} patch ${resourceOf(ref.kind)} ${shellQuote(ref.name)} --type merge --patch-file <file>`,
    ),
  ]);
  return `${lines}\n${stringify(annotationPatch(text), { lineWidth: 0 })}`;
}

/** YAML comment lines; a translation's own line breaks stay inside the comment. */
function comments(lines: readonly string[]): string {
  return lines
    .flatMap((line) => line.split('\n'))
    .map((line) => `# ${line}`)
    .join('\n');
}
