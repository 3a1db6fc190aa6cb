// Builds the three bundles the product ships: the VS Code extension and the two Node 20
// executables (sidecar on the laptop, agent in the cluster). One config so flags can't drift.
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
};
const lazyImports = {
  name: 'lazy-extension-bundles',
  setup(b) {
    b.onResolve({ filter: /^\.{1,2}\// }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      const target = path.relative(process.cwd(), path.resolve(args.resolveDir, args.path));
      const file = lazyBundles[`${target}.ts`] ?? lazyBundles[path.join(target, 'index.ts')];
      if (file === undefined)
        throw new Error(`${args.importer}: import('${args.path}') is not a lazy bundle`);
      return { path: `./${file}`, external: true };
    });
  },
};
// The extension bundles are minified (parse time at startup); the executables stay readable.
const extensionBuild = { ...common, external: ['vscode'], minify: true };

await Promise.all([
  // `vscode` is provided by the editor at run time.
  build({
    ...extensionBuild,
    entryPoints: ['extension/extension.ts'],
    outfile: 'dist/extension.js',
    plugins: [lazyImports],
  }),
  ...Object.entries(lazyBundles).map(([entry, file]) =>
    build({ ...extensionBuild, entryPoints: [entry], outfile: `dist/${file}` }),
  ),
  build({ ...common, ...executable, entryPoints: ['sidecar/main.ts'], outfile: 'dist/sidecar.js' }),
  build({ ...common, ...executable, entryPoints: ['agent/main.ts'], outfile: 'dist/agent.js' }),
]);
