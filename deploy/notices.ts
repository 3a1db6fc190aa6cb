// `npm run build` (after esbuild): writes dist/THIRD_PARTY_NOTICES.txt, the notices of every
// third-party package the bundles carry — name, version, licence and the licence texts the package
// ships (LICENSE, NOTICE, COPYING) — from the bundles' own inputs (dist/bundle-inputs.json, the
// esbuild metafiles), so the list is what ships and cannot drift from it. The .vsix carries it
// (.vscodeignore) and so does the agent image (deploy/Dockerfile). esbuild's *.LEGAL.txt files
// hold only the comments marked as legal inside sources, not the packages' licences.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { productVersion } from '../core/version';

export const NOTICES_FILE = 'THIRD_PARTY_NOTICES.txt';

export interface BundledPackage {
  name: string;
  version: string;
  license: string;
  /** Path of the package in the checkout, e.g. `node_modules/a/node_modules/b`. */
  dir: string;
  repository?: string;
  /** The bundles (dist/*.js) that carry part of it. */
  bundles: string[];
  /** Licence files the package ships, in name order. */
  texts: Array<{ file: string; text: string }>;
}

/** `node_modules/@s/p/lib/x.js` → `node_modules/@s/p`; nested installs keep their full path. */
export function packageDirOf(input: string): string | undefined {
  const parts = input.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at === -1 || at + 1 >= parts.length) return undefined;
  const width = parts[at + 1]!.startsWith('@') ? 2 : 1;
  return parts.slice(0, at + 1 + width).join('/');
}

interface PackageJson {
  name?: string;
  version?: string;
  license?: string | { type?: string };
  licenses?: Array<{ type?: string }>;
  repository?: string | { url?: string };
}

function licenseOf(pkg: PackageJson): string | undefined {
  if (typeof pkg.license === 'string') return pkg.license;
  if (pkg.license?.type) return pkg.license.type;
  const types = (pkg.licenses ?? []).map((l) => l.type).filter(Boolean);
  return types.length > 0 ? types.join(' OR ') : undefined;
}

const licenceFile = /^(un)?(licen[cs]e|copying|notice)([._-].*)?$/i;

/** The packages `inputs` (bundle → its metafile inputs) carry, read from `root`. */
export function bundledPackages(root: string, inputs: Record<string, readonly string[]>): BundledPackage[] {
  const byDir = new Map<string, Set<string>>();
  for (const [bundle, files] of Object.entries(inputs)) {
    for (const file of files) {
      const dir = packageDirOf(path.isAbsolute(file) ? path.relative(root, file) : file);
      if (dir !== undefined) byDir.set(dir, (byDir.get(dir) ?? new Set()).add(bundle));
    }
  }
  const packages = [...byDir].map(([dir, bundles]): BundledPackage => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, dir, 'package.json'), 'utf8')) as PackageJson;
    const name = pkg.name ?? dir;
    const license = licenseOf(pkg);
    if (license === undefined) {
      throw new Error(
        `${name} (${dir}) declares no licence in its package.json: find its terms before shipping it in a bundle`,
      );
    }
    const texts = fs
      .readdirSync(path.join(root, dir))
      .filter((f) => licenceFile.test(f) && fs.statSync(path.join(root, dir, f)).isFile())
      .sort()
      .map((file) => ({ file, text: fs.readFileSync(path.join(root, dir, file), 'utf8').trimEnd() }));
    const repository = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
    return {
      name,
      version: pkg.version ?? 'unknown',
      license,
      dir,
      ...(repository ? { repository } : {}),
      bundles: [...bundles].sort(),
      texts,
    };
  });
  // One entry per name@version: the same files can be reached by two paths (a symlinked
  // node_modules, or a plugin that resolves to an absolute path).
  const unique = new Map<string, BundledPackage>();
  for (const p of packages) {
    const key = `${p.name}@${p.version}`;
    const seen = unique.get(key);
    if (seen) seen.bundles = [...new Set([...seen.bundles, ...p.bundles])].sort();
    else unique.set(key, p);
  }
  return [...unique.values()].sort(
    (a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version),
  );
}

export function renderNotices(packages: readonly BundledPackage[]): string {
  const rule = '='.repeat(78);
  const head = [
    `Queue Split ${productVersion}: third-party notices`,
    '',
    'The Queue Split extension (.vsix: dist/extension*.js, dist/sidecar.js) and agent image',
    '(agent.js) bundle the packages below. Each entry gives the version, the licence its',
    'package.json declares, the bundles that carry it, and the licence files it ships.',
    '',
    ...packages.map((p) => `  ${p.name}@${p.version}  ${p.license}`),
  ];
  const entries = packages.map((p) =>
    [
      rule,
      `${p.name}@${p.version}`,
      `Licence: ${p.license}`,
      ...(p.repository ? [`Source: ${p.repository}`] : []),
      `Bundled in: ${p.bundles.join(', ')}`,
      '',
      ...(p.texts.length > 0
        ? p.texts.flatMap((t) => [`--- ${t.file}`, t.text, ''])
        : [`The package ships no licence file; its package.json declares ${p.license}.`, '']),
    ].join('\n'),
  );
  return `${[...head, '', ...entries].join('\n').trimEnd()}\n`;
}

if (require.main === module) {
  const root = path.resolve(__dirname, '..');
  const inputsFile = path.join(root, 'dist', 'bundle-inputs.json');
  const inputs = JSON.parse(fs.readFileSync(inputsFile, 'utf8')) as Record<string, string[]>;
  const packages = bundledPackages(root, inputs);
  fs.writeFileSync(path.join(root, 'dist', NOTICES_FILE), renderNotices(packages));
  console.log(`wrote dist/${NOTICES_FILE} (${packages.length} bundled packages)`);
}
