// package.json as VS Code shows it: its user-visible strings are `%key%` references resolved from
// package.nls.json (English), so tests that read a title or a welcome text read it through here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../env/paths';

/** package.json as written: user-visible strings are `%key%`. */
export function rawManifest(root = repoRoot): unknown {
  return JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as unknown;
}

/** package.nls.json: key to English text. */
export function nlsStrings(root = repoRoot): Record<string, string> {
  return JSON.parse(fs.readFileSync(path.join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;
}

/** Every `%key%` reference of a manifest (a whole string value, as VS Code and vsce resolve). */
export function nlsReferences(manifest: unknown): string[] {
  const found: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      const m = /^%([^%\s]+)%$/.exec(value);
      if (m) found.push(m[1]!);
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(manifest);
  return found;
}

/** package.json with every `%key%` replaced by its package.nls.json text; a missing key throws. */
export function localizedManifest<T>(root = repoRoot): T {
  const strings = nlsStrings(root);
  const resolve = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const m = /^%([^%\s]+)%$/.exec(value);
      if (!m) return value;
      const text = strings[m[1]!];
      if (text === undefined) throw new Error(`package.json names %${m[1]}%, which package.nls.json lacks`);
      return text;
    }
    if (Array.isArray(value)) return value.map(resolve);
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
    return value;
  };
  return resolve(rawManifest(root)) as T;
}
