// Builds the three bundles the product ships: the VS Code extension and the two Node 20
// executables (sidecar on the laptop, agent in the cluster). One config so flags can't drift.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'linked',
  minify: process.argv.includes('--minify'),
  logLevel: 'info',
  legalComments: 'linked',
  // What each bundle is made of: deploy/notices.ts lists the bundled packages from it.
  metafile: true,
};

const executable = { banner: { js: '#!/usr/bin/env node' } };

// The extension ships as a small activation bundle plus bundles it loads on first use: VS Code
// parses all of dist/extension.js at startup, so the Kubernetes client, kafkajs, amqplib, zod and
// yaml (≈ 8 MB) live in their own files. A dynamic `import()` of one of these entries becomes
// `require('./<file>')` at run time, resolved next to dist/extension.js; any other import is
// bundled as usual. The extension-host test "loads its heavy modules lazily" checks the result.
const lazyBundles = {
  'extension/kube/index.ts': 'extension-kube.js',
  'extension/publish/testMessage.ts': 'extension-publish.js',
  'extension/model/manifests.ts': 'extension-manifests.js',
  'extension/model/details.ts': 'extension-details.js',
  'extension/model/launchEdit.ts': 'extension-launch.js',
  'extension/model/annotation/index.ts': 'extension-annotation.js',
  // Required on first use (core/filter/loadAutomata.ts), not imported: the filter automata.
  'core/filter/automata.ts': 'extension-automata.js',
};
const lazyImports = {
  name: 'lazy-extension-bundles',
  setup(b) {
    b.onResolve({ filter: /^\.{1,2}\// }, (args) => {
      if (args.kind !== 'dynamic-import' && args.kind !== 'require-call') return undefined;
      const target = path.relative(process.cwd(), path.resolve(args.resolveDir, args.path));
      const file = lazyBundles[`${target}.ts`] ?? lazyBundles[path.join(target, 'index.ts')];
      if (file === undefined && args.kind === 'require-call') return undefined;
      if (file === undefined)
        throw new Error(`${args.importer}: import('${args.path}') is not a lazy bundle`);
      return { path: `./${file}`, external: true };
    });
  },
};
// jsonc-parser's `main` is a UMD build whose factory requires its own files at run time, which
// esbuild cannot follow (the bundle then fails with "Cannot find module './impl/format'"): bundle
// its ES module build instead.
const jsoncParserEsm = {
  name: 'jsonc-parser-esm',
  setup(b) {
    b.onResolve({ filter: /^jsonc-parser$/ }, () => ({
      path: path.resolve('node_modules/jsonc-parser/lib/esm/main.js'),
    }));
  },
};
// The extension bundles are minified (parse time at startup); the sidecar stays readable, the
// agent keeps its names (below).
// `@vscode/l10n` (the vscode-free modules' localization) is VS Code's own l10n in the extension's
// bundles: extension/l10nBridge.ts says why.
const extensionBuild = {
  ...common,
  external: ['vscode'],
  alias: { '@vscode/l10n': './extension/l10nBridge.ts' },
  minify: true,
  plugins: [lazyImports, jsoncParserEsm],
};

// The agent runs in every split workload's namespace, so its bundle's memory counts once per
// workload: the unminified bundle's comments carry a few non-ASCII characters, which make V8
// hold its whole 13 MB source as a two-byte string (26 MiB of heap). Whitespace and syntax are
// minified (no comments, 7 MB of ASCII); identifiers are not, so a stack trace still names
// functions and classes as the source does, and dist/agent.js.map (shipped in the image) maps
// its positions: deploy/mapStack.ts, or `NODE_OPTIONS=--enable-source-maps` (deploy/Dockerfile
// says why that is not the default). `--minify` builds everything fully minified.
const agentMinify = common.minify ? {} : { minifyWhitespace: true, minifySyntax: true };

const results = await Promise.all([
  // `vscode` is provided by the editor at run time.
  build({
    ...extensionBuild,
    entryPoints: ['extension/extension.ts'],
    outfile: 'dist/extension.js',
    plugins: [lazyImports, jsoncParserEsm],
  }),
  ...Object.entries(lazyBundles).map(([entry, file]) =>
    build({ ...extensionBuild, entryPoints: [entry], outfile: `dist/${file}` }),
  ),
  build({ ...common, ...executable, entryPoints: ['sidecar/main.ts'], outfile: 'dist/sidecar.js' }),
  build({
    ...common,
    ...executable,
    ...agentMinify,
    entryPoints: ['agent/main.ts'],
    outfile: 'dist/agent.js',
  }),
]);

// Each bundle's inputs (source files and the node_modules files it carries), for the notices.
const inputs = {};
for (const { metafile } of results) {
  for (const [out, info] of Object.entries(metafile.outputs)) {
    if (out.endsWith('.js')) inputs[path.basename(out)] = Object.keys(info.inputs).sort();
  }
}
fs.writeFileSync('dist/bundle-inputs.json', `${JSON.stringify(inputs, null, 1)}\n`);
