// The .vsix is ready for the Marketplace (README "Using it from VS Code"): its readme is the
// user-facing MARKETPLACE.md (not the contributors' README.md), it carries CHANGELOG.md, and every
// relative link and image in them resolves inside the package (vsce keeps relative links as they
// are: --no-rewrite-relative-links); links into the project's repository name files that exist.
// The manifest names the repository, builds before packaging, declares what works in Restricted
// Mode, keeps machine settings out of workspaces, and its engines match @types/vscode.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { repoRoot } from '../env/paths';
import { localizedManifest, rawManifest } from '../support/manifest';
import { packagedVsix, vsixEntries, vsixText } from '../support/vsix';

const REPOSITORY = 'https://github.com/queuesplit/queue-split';

interface Manifest {
  version: string;
  l10n?: string;
  repository: { url: string };
  bugs: { url: string };
  homepage: string;
  engines: { vscode: string };
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
  capabilities: {
    untrustedWorkspaces: {
      supported: boolean | 'limited';
      description?: string;
      restrictedConfigurations?: string[];
    };
    virtualWorkspaces: boolean | { supported: boolean | 'limited'; description?: string };
  };
  contributes: {
    commands: { command: string }[];
    configuration: { properties: Record<string, { scope?: string }> };
  };
}

const manifest = localizedManifest<Manifest>();

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every link and image target of a Markdown text: [t](x), ![a](x), [r]: x, <img src>, <a href>. */
function targets(markdown: string): string[] {
  const text = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const found: string[] = [];
  for (const m of text.matchAll(/!?\[(?:[^\][]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
    found.push(m[1]!);
  for (const m of text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) found.push(m[1]!);
  for (const m of text.matchAll(/<(?:img|a)\s[^>]*?(?:src|href)=["']([^"']+)["']/gi)) found.push(m[1]!);
  for (const m of text.matchAll(/<(https?:\/\/[^>\s]+)>/g)) found.push(m[1]!);
  return found;
}

function anchors(markdown: string): Set<string> {
  return new Set(
    markdown
      .replace(/```[\s\S]*?```/g, '')
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => slug(l.replace(/^#+ /, ''))),
  );
}

/** Dead links of `doc` (the text of `entry` in the package): each with why. */
function deadLinks(doc: string, entry: string, entries: Set<string>): string[] {
  const dead: string[] = [];
  const own = anchors(doc);
  for (const raw of targets(doc)) {
    const target = decodeURI(raw);
    if (/^mailto:/i.test(target)) continue;
    if (target.startsWith(`${REPOSITORY}/blob/main/`) || target.startsWith(`${REPOSITORY}/tree/main/`)) {
      const file = target.replace(/^[^#]*\/(?:blob|tree)\/main\//, '').replace(/#.*$/, '');
      if (!fs.existsSync(path.join(repoRoot, file))) dead.push(`${raw}: ${file} is not in the repository`);
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // absolute (https:, vscode:, command:)
    if (target.startsWith('#')) {
      if (!own.has(target.slice(1))) dead.push(`${raw}: no such heading in ${entry}`);
      continue;
    }
    if (target.startsWith('/')) {
      dead.push(`${raw}: root-relative, resolves outside the package`);
      continue;
    }
    const file = target.replace(/[?#].*$/, '');
    const inPackage = path.posix.normalize(path.posix.join(path.posix.dirname(entry), file));
    if (!entries.has(inPackage)) dead.push(`${raw}: ${inPackage} is not in the .vsix`);
  }
  return dead;
}

describe('the Marketplace package', () => {
  test('every relative link and image of the packaged readme and changelog resolves inside the .vsix', () => {
    const vsix = packagedVsix();
    const entries = new Set(vsixEntries(vsix));
    const readme = vsixText(vsix, 'extension/readme.md');
    const changelog = vsixText(vsix, 'extension/changelog.md');
    assert.equal(
      readme,
      fs.readFileSync(path.join(repoRoot, 'MARKETPLACE.md'), 'utf8'),
      'the readme is MARKETPLACE.md',
    );
    assert.equal(changelog, fs.readFileSync(path.join(repoRoot, 'CHANGELOG.md'), 'utf8'));
    assert.ok(!entries.has('extension/README.md'), "the contributors' README.md is not packaged");
    const images = targets(readme).filter((t) => /\.(png|jpe?g|gif)$/i.test(t));
    assert.ok(images.length >= 3, `the readme shows screenshots: ${images.join(', ')}`);
    assert.deepEqual(
      [
        ...deadLinks(readme, 'extension/readme.md', entries),
        ...deadLinks(changelog, 'extension/changelog.md', entries),
      ],
      [],
    );
    // The manifest in the package is this one (version, capabilities), and nothing else slipped in.
    const packaged = JSON.parse(vsixText(vsix, 'extension/package.json')) as Manifest;
    assert.equal(packaged.version, manifest.version);
    assert.deepEqual(packaged.capabilities, (rawManifest() as Manifest).capabilities);
    const unexpected = [...entries].filter(
      (e) =>
        e.startsWith('extension/') &&
        !/^extension\/(dist\/(extension(-[a-z]+)?|sidecar)\.js|dist\/THIRD_PARTY_NOTICES\.txt|media\/.+|docs\/images\/extension\/[a-z-]+\.png|package\.json|package\.nls(\.[a-zA-Z-]+)?\.json|l10n\/bundle\.l10n(\.[a-zA-Z-]+)?\.json|readme\.md|changelog\.md|LICENSE\.txt)$/.test(
          e,
        ),
    );
    assert.deepEqual(unexpected, [], 'only what runs or is shown ships');
    // Localization: package.json's %key% texts resolve from package.nls.json, vscode.l10n.t's from
    // the bundle package.json's "l10n" names; both as committed.
    assert.equal(packaged.l10n, './l10n');
    for (const file of ['package.nls.json', 'l10n/bundle.l10n.json'])
      assert.equal(
        vsixText(vsix, `extension/${file}`),
        fs.readFileSync(path.join(repoRoot, file), 'utf8'),
        `${file} ships as committed`,
      );
    assert.ok(
      ![...entries].some((e) => /qps-ploc/.test(e)),
      'the pseudo-locale of the e2e fixtures stays out of the package',
    );
  });

  test('the link check finds what it is for', () => {
    const entries = new Set(['extension/readme.md', 'extension/docs/images/extension/tree.png']);
    const doc = [
      '# Title',
      '## Broker passwords',
      '![ok](docs/images/extension/tree.png) [ok](#broker-passwords) [ok](https://example.com/x)',
      '![dead](docs/images/extension/missing.png) [dead](#nowhere) [dead](../README.md) [dead](/media/x.png)',
      `[dead](${REPOSITORY}/blob/main/docs/no-such-file.md) [ok](${REPOSITORY}/blob/main/docs/launch-configurations.md)`,
      '<img src="media/nope.png"> `[not a link](nope.md)`',
      '[ref]: docs/nothing.md',
    ].join('\n');
    assert.deepEqual(
      deadLinks(doc, 'extension/readme.md', entries).map((d) => d.split(':')[0]),
      [
        'docs/images/extension/missing.png',
        '#nowhere',
        '../README.md',
        '/media/x.png',
        `${REPOSITORY.split(':')[0]}`,
        'docs/nothing.md',
        'media/nope.png',
      ],
    );
  });

  test('the manifest names the repository, builds before packaging and packages the Marketplace readme', () => {
    assert.equal(manifest.repository.url, `${REPOSITORY}.git`);
    assert.equal(manifest.bugs.url, `${REPOSITORY}/issues`);
    assert.equal(manifest.homepage, `${REPOSITORY}#readme`);
    assert.equal(manifest.scripts['vscode:prepublish'], 'npm run build');
    assert.match(
      manifest.scripts.package!,
      /^vsce package .*--readme-path MARKETPLACE\.md .*--out dist\/queue-split\.vsix$/,
    );
    const runAll = fs.readFileSync(path.join(repoRoot, 'test', 'run-all.sh'), 'utf8');
    assert.match(runAll, /^\s*step package npm run --silent package/m, 'npm test packages the .vsix');
  });

  test('engines.vscode is the oldest VS Code it runs on, and @types/vscode is that version', () => {
    // 1.90 is the first VS Code whose extension host is Node.js 20 (Electron 29): the bundles
    // target node20, and the sidecar runs on that runtime unless queueSplit.sidecar.nodePath says
    // otherwise. Its API needs less (LogOutputChannel, 1.74); `npm run typecheck` against
    // @types/vscode 1.90 proves it uses nothing newer.
    assert.equal(manifest.engines.vscode, '^1.90.0');
    assert.equal(manifest.devDependencies['@types/vscode'], '~1.90.0');
    const installed = JSON.parse(
      fs.readFileSync(path.join(repoRoot, 'node_modules', '@types', 'vscode', 'package.json'), 'utf8'),
    ) as { version: string };
    assert.match(installed.version, /^1\.90\./);
  });

  test('Restricted Mode and machine settings are declared', () => {
    const { untrustedWorkspaces, virtualWorkspaces } = manifest.capabilities;
    assert.equal(untrustedWorkspaces.supported, 'limited');
    assert.match(untrustedWorkspaces.description ?? '', /Restricted Mode/);
    const properties = manifest.contributes.configuration.properties;
    for (const key of untrustedWorkspaces.restrictedConfigurations ?? [])
      assert.ok(properties[key] !== undefined, `restrictedConfigurations names ${key}, which is no setting`);
    assert.equal(
      typeof virtualWorkspaces === 'object' ? virtualWorkspaces.supported : virtualWorkspaces,
      false,
    );
    for (const key of ['queueSplit.kubeconfig', 'queueSplit.sidecar.nodePath', 'queueSplit.install.image'])
      assert.equal(properties[key]?.scope, 'machine', `${key} is machine-scoped`);
    assert.ok(manifest.contributes.commands.some((c) => c.command === 'queueSplit.setBrokerPassword'));
  });
});
