// Builds the three bundles the product ships: the VS Code extension and the two Node 20
// executables (sidecar on the laptop, agent in the cluster). One config so flags can't drift.
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

await Promise.all([
  // `vscode` is provided by the editor at run time.
  build({
    ...common,
    entryPoints: ['extension/extension.ts'],
    outfile: 'dist/extension.js',
    external: ['vscode'],
  }),
  build({ ...common, ...executable, entryPoints: ['sidecar/main.ts'], outfile: 'dist/sidecar.js' }),
  build({ ...common, ...executable, entryPoints: ['agent/main.ts'], outfile: 'dist/agent.js' }),
]);
