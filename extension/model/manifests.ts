// Workspace hints for "which workload is this repo?": Deployments and StatefulSets in the
// repo's YAML that carry the queue-config annotation. Templated files (Helm) that do not parse
// are skipped; a `kind: List` is searched too.
import { parseAllDocuments } from 'yaml';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import type { WorkloadCandidate } from './startSplit';
import type { WorkloadKind } from './types';

/** Cheap pre-check before parsing a file. */
export function mentionsQueueConfig(text: string): boolean {
  return text.includes(QUEUE_CONFIG_ANNOTATION);
}

interface ObjectLike {
  kind?: unknown;
  metadata?: { name?: unknown; annotations?: Record<string, unknown> };
  items?: unknown;
}

function collect(value: unknown, file: string, out: WorkloadCandidate[]): void {
  if (typeof value !== 'object' || value === null) return;
  const object = value as ObjectLike;
  if (object.kind === 'List' && Array.isArray(object.items)) {
    for (const item of object.items) collect(item, file, out);
    return;
  }
  if (object.kind !== 'Deployment' && object.kind !== 'StatefulSet') return;
  const name = object.metadata?.name;
  const annotations = object.metadata?.annotations;
  if (typeof name !== 'string' || name === '' || typeof annotations !== 'object' || annotations === null)
    return;
  if (!(QUEUE_CONFIG_ANNOTATION in annotations)) return;
  out.push({ kind: object.kind as WorkloadKind, name, from: file, strength: 1 });
}

export function manifestCandidates(text: string, file: string): WorkloadCandidate[] {
  if (!mentionsQueueConfig(text)) return [];
  const out: WorkloadCandidate[] = [];
  let documents;
  try {
    documents = parseAllDocuments(text, { uniqueKeys: false });
  } catch {
    return [];
  }
  const list = Array.isArray(documents) ? documents : [documents];
  for (const document of list) {
    if (document.errors.length > 0) continue;
    try {
      collect(document.toJS({ maxAliasCount: 50 }), file, out);
    } catch {
      // aliases gone wild or similar: not a manifest we can use
    }
  }
  return out;
}

/** The workspace folder's name as a last-resort guess (repos are often named after the service). */
export function folderCandidate(folderName: string): WorkloadCandidate | undefined {
  const name = folderName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return name === '' ? undefined : { name, from: 'the folder name', strength: 2 };
}
