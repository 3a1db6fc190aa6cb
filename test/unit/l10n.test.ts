// Localization is wired and complete (README "Localization"): package.json's user-visible strings
// are %key% references that package.nls.json resolves, with no key left over; and the committed
// l10n/bundle.l10n.json is what `npm run l10n:export` extracts from extension/ today, so a new
// `vscode.l10n.t` / `@vscode/l10n` string cannot ship without its bundle entry.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import * as l10n from '@vscode/l10n';
import { repoRoot } from '../env/paths';
import { nlsReferences, nlsStrings, rawManifest } from '../support/manifest';

/** Manifest fields VS Code shows to the user; each must be a %key% (checked at every depth). */
const VISIBLE = new Set([
  'displayName',
  'description',
  'markdownDescription',
  'title',
  'shortTitle',
  'category',
  'name',
  'contextualTitle',
  'contents',
  'enumDescriptions',
  'markdownEnumDescriptions',
  'deprecationMessage',
  'markdownDeprecationMessage',
  'altText',
]);

/** Where a user-visible field of the manifest holds literal text instead of a %key%. */
function literalTexts(value: unknown, at: string, field?: string): string[] {
  if (typeof value === 'string')
    return field !== undefined && VISIBLE.has(field) && !/^%[^%\s]+%$/.test(value) ? [at] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => literalTexts(v, `${at}[${i}]`, field));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) =>
      // Configuration property names are setting ids, not fields.
      literalTexts(v, `${at}.${k}`, k.startsWith('queueSplit.') ? undefined : k),
    );
  return [];
}

describe('localization', () => {
  test('every %key% of package.json is in package.nls.json, and every key there is used', () => {
    const manifest = rawManifest();
    const used = new Set(nlsReferences(manifest));
    const defined = new Set(Object.keys(nlsStrings()));
    assert.deepEqual(
      [...used].filter((k) => !defined.has(k)),
      [],
      'missing from package.nls.json',
    );
    assert.deepEqual(
      [...defined].filter((k) => !used.has(k)),
      [],
      'unused in package.json',
    );
    for (const [key, text] of Object.entries(nlsStrings())) assert.ok(text.trim() !== '', `${key} is empty`);
  });

  test("package.json's user-visible texts are all %key% references", () => {
    const { contributes, capabilities, displayName, description } = rawManifest() as Record<string, unknown>;
    assert.deepEqual(
      [
        ...literalTexts({ displayName, description }, 'package.json'),
        ...literalTexts(capabilities, 'capabilities'),
        ...literalTexts(contributes, 'contributes'),
      ],
      [],
      'move these texts to package.nls.json and name them as %key%',
    );
  });

  test('the literal-text check finds what it is for', () => {
    assert.deepEqual(
      literalTexts(
        {
          commands: [{ title: 'Start', category: '%command.category%' }],
          x: { 'queueSplit.a': { description: 'b' } },
        },
        'c',
      ),
      ['c.commands[0].title', 'c.x.queueSplit.a.description'],
    );
  });

  test('package.json names the bundle folder', () => {
    assert.equal((rawManifest() as { l10n?: string }).l10n, './l10n');
  });

  test('every placeholder of every bundle string survives formatting', () => {
    // l10n.t's format replaces {name} greedily up to the first "}": a {0} inside literal braces
    // (a JSON example) would be swallowed; such an example goes in as an argument instead.
    const bundle = JSON.parse(
      fs.readFileSync(path.join(repoRoot, 'l10n', 'bundle.l10n.json'), 'utf8'),
    ) as Record<string, string>;
    const lost: string[] = [];
    for (const message of Object.keys(bundle)) {
      const indices = [...new Set([...message.matchAll(/\{(\d+)\}/g)].map((m) => Number(m[1])))];
      if (indices.length === 0) continue;
      const args = Array.from({ length: Math.max(...indices) + 1 }, (_, i) => `\u0000${i}\u0000`);
      const out = l10n.t(message, ...args);
      for (const i of indices) if (!out.includes(args[i]!)) lost.push(`{${i}} in ${message}`);
    }
    assert.deepEqual(lost, []);
  });

  test('l10n/bundle.l10n.json is what `npm run l10n:export` extracts from extension/ now', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-l10n-'));
    try {
      const exporter = path.join(repoRoot, 'node_modules', '.bin', 'vscode-l10n-dev');
      const run = spawnSync(exporter, ['export', '--outDir', out, './extension'], {
        cwd: repoRoot,
        encoding: 'utf8',
      });
      assert.equal(run.status, 0, `${exporter} export failed:\n${run.stdout}\n${run.stderr}`);
      const fresh = JSON.parse(fs.readFileSync(path.join(out, 'bundle.l10n.json'), 'utf8')) as unknown;
      const committed = JSON.parse(
        fs.readFileSync(path.join(repoRoot, 'l10n', 'bundle.l10n.json'), 'utf8'),
      ) as unknown;
      assert.deepEqual(
        committed,
        fresh,
        'l10n/bundle.l10n.json is stale: run `npm run l10n:export` and commit l10n/bundle.l10n.json',
      );
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
  test('no button, pick or prompt text in extension code is an English literal', () => {
    // `{ title: 'Stop It', run }` buttons, quick pick items and input boxes: whatever a person reads
    // goes through l10n.t (command ids, setting keys and identifiers are not capitalized words).
    const literal = /\b(title|placeHolder|prompt|tooltip|label|detail|description):\s*['"`][A-Z][a-z]/;
    const files = fs
      .readdirSync(path.join(repoRoot, 'extension'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'));
    const found = files.flatMap((file) =>
      fs
        .readFileSync(path.join(repoRoot, 'extension', file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (literal.test(line) ? [`extension/${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    assert.deepEqual(found, [], 'wrap these in l10n.t');
  });
  test('a translation is a file to add: the package ships it beside the English one', () => {
    // VS Code reads package.nls.<locale>.json, l10n/bundle.l10n.<locale>.json and, for a
    // walkthrough page <page>.md, <page>.nls.<locale>.md (then <page>.nls.<language>.md; its
    // gettingStartedDetailsRenderer.ts readContentsOfPath): .vscodeignore must let each through.
    const patterns = fs
      .readFileSync(path.join(repoRoot, '.vscodeignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith('!'))
      .map((line) => glob(line.slice(1)));
    const manifest = rawManifest() as {
      contributes: { walkthroughs: { steps: { media: { markdown?: string } }[] }[] };
    };
    const pages = manifest.contributes.walkthroughs
      .flatMap((w) => w.steps.map((step) => step.media.markdown))
      .filter((page): page is string => page !== undefined);
    assert.ok(pages.length > 0, 'the walkthrough has markdown pages');
    const translations = [
      'package.nls.de.json',
      'package.nls.zh-cn.json',
      'l10n/bundle.l10n.de.json',
      'l10n/bundle.l10n.zh-cn.json',
      ...pages.flatMap((page) => {
        assert.match(page, /\.md$/, `${page}: VS Code finds a translation only for a .md page`);
        return [page.replace(/\.md$/, '.nls.de.md'), page.replace(/\.md$/, '.nls.zh-cn.md')];
      }),
    ];
    for (const file of translations)
      assert.ok(
        patterns.some((p) => p.test(file)),
        `${file} would be left out of the .vsix`,
      );
  });
});

/** A .vscodeignore glob as a regular expression (`**` any path, `*` within one segment). */
function glob(pattern: string): RegExp {
  const escaped = pattern
    .split('**')
    .map((part) =>
      part
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/]*'),
    )
    .join('.*');
  return new RegExp(`^${escaped}$`);
}
