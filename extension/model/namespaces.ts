// Which namespaces the Queue Splits view shows (README "Using it from VS Code", "Several
// namespaces"): the `queueSplit.namespaces` setting read as pure data, and the set it makes
// with the selected namespace (pinned, queueSplit.namespace or the context's) and, for "*", the
// namespaces the user may list. One namespace keeps the flat tree; several get a namespace level.
// No vscode import: the texts are made by the callers (l10n).

/** The value of queueSplit.namespaces that means "every namespace I can list". */
export const ALL_NAMESPACES = '*';

/** A Kubernetes namespace name (an RFC 1123 DNS label). */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function isNamespaceName(value: string): boolean {
  return value.length <= 63 && NAMESPACE_NAME.test(value);
}

export type NamespacesSetting =
  /** Unset or empty: the selected namespace only (the tree as before). */
  | { kind: 'selected' }
  /** These namespaces, in this order (the selected one added first when missing). */
  | { kind: 'list'; names: string[] }
  /** Every namespace the user may list (the selected one too when listing is refused). */
  | { kind: 'all' };

export interface NamespacesParse {
  setting: NamespacesSetting;
  /** Entries left out, each with why (the caller says so, naming the setting). */
  invalid: { value: string; reason: 'not-a-name' | 'not-a-string' }[];
}

/** queueSplit.namespaces as the user wrote it (an array of names, or ["*"]). */
export function parseNamespacesSetting(value: unknown): NamespacesParse {
  const invalid: NamespacesParse['invalid'] = [];
  if (value === undefined || value === null) return { setting: { kind: 'selected' }, invalid };
  const entries = Array.isArray(value) ? (value as unknown[]) : [value];
  const names: string[] = [];
  let all = false;
  for (const entry of entries) {
    if (typeof entry !== 'string') {
      invalid.push({ value: JSON.stringify(entry) ?? String(entry), reason: 'not-a-string' });
      continue;
    }
    const name = entry.trim();
    if (name === '') continue;
    if (name === ALL_NAMESPACES) all = true;
    else if (!isNamespaceName(name)) invalid.push({ value: entry, reason: 'not-a-name' });
    else if (!names.includes(name)) names.push(name);
  }
  if (all) return { setting: { kind: 'all' }, invalid };
  return { setting: names.length > 0 ? { kind: 'list', names } : { kind: 'selected' }, invalid };
}

export interface NamespaceSet {
  /** The namespaces shown, in order; never empty. */
  namespaces: string[];
  /** The selected namespace: where palette commands and debug launches act. */
  selected: string;
  /** "all" was asked but the user may not list namespaces: only the selected one is shown. */
  cannotList?: boolean;
}

/**
 * The namespaces the view shows. `listable`: the namespaces the user may list (sorted), or
 * undefined when RBAC refuses the list (only asked for "all").
 */
export function resolveNamespaces(
  setting: NamespacesSetting,
  selected: string,
  listable?: readonly string[],
): NamespaceSet {
  switch (setting.kind) {
    case 'selected':
      return { namespaces: [selected], selected };
    case 'list':
      // The selected namespace stays visible: it is where palette commands and launches act.
      return {
        namespaces: setting.names.includes(selected) ? [...setting.names] : [selected, ...setting.names],
        selected,
      };
    case 'all':
      if (listable === undefined) return { namespaces: [selected], selected, cannotList: true };
      return {
        namespaces: listable.includes(selected) ? [...listable] : [selected, ...listable],
        selected,
      };
  }
}

/** The setting's value for a choice made in the picker (the order of `chosen` is kept). */
export function namespacesSettingValue(chosen: readonly string[], all: boolean): string[] {
  if (all) return [ALL_NAMESPACES];
  return [...new Set(chosen.map((n) => n.trim()).filter((n) => n !== ''))];
}

/** Names typed in an input box: "team-a, team-b team-c"; undefined names the first bad one. */
export function parseTypedNamespaces(text: string): { names: string[] } | { bad: string } {
  const names: string[] = [];
  for (const part of text.split(/[\s,]+/)) {
    if (part === '') continue;
    if (part !== ALL_NAMESPACES && !isNamespaceName(part)) return { bad: part };
    if (!names.includes(part)) names.push(part);
  }
  return { names };
}
