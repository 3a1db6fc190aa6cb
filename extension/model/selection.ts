// The context/namespace chosen with "Select Context/Namespace…", as kept in the workspace's
// selection file (see selectionStore.ts): parsing is strict so a damaged or foreign file is
// reported and ignored, never half-applied.

export interface Selection {
  context?: string;
  namespace?: string;
}

/** The file's text for a selection (only the fields that are set). */
export function formatSelection(selection: Selection): string {
  const kept: Selection = {};
  if (selection.context !== undefined) kept.context = selection.context;
  if (selection.namespace !== undefined) kept.namespace = selection.namespace;
  return `${JSON.stringify(kept, null, 2)}\n`;
}

/** The selection in a file's text, or why it is not one (naming the field and the problem). */
export function parseSelection(text: string): { selection: Selection } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'it is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problem: 'it is not a JSON object' };
  }
  const record = value as Record<string, unknown>;
  const selection: Selection = {};
  for (const field of ['context', 'namespace'] as const) {
    const v = record[field];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '') return { problem: `"${field}" is not a non-empty string` };
    selection[field] = v;
  }
  return { selection };
}
