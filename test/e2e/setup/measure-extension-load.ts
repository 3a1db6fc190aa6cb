// Measures what loading the extension costs before any command runs: require() of the bundle
// (read + parse + evaluate) and activate(), in a plain Node process with a stand-in `vscode`
// module (a Proxy that answers every API call with a harmless value). The real extension host
// adds its own overhead; the extension-host test "activates" logs that figure. Also lists which
// of the lazily loaded bundles activation required, which must be none.
//   npx tsx test/e2e/setup/measure-extension-load.ts [dist/extension.js] [runs]
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { repoRoot } from '../harness/paths';

const bundle = path.resolve(process.argv[2] ?? path.join(repoRoot, 'dist', 'extension.js'));
/** Files that hold the heavy clients (Kubernetes, kafkajs, amqplib): activation must not load them. */
const LAZY = [
  'extension-kube.js',
  'extension-publish.js',
  'node_modules/@kubernetes/client-node/',
  'node_modules/kafkajs/',
  'node_modules/amqplib/',
];

/** A stand-in for the vscode API: every property is callable and returns another stand-in. */
function standIn(name: string): unknown {
  const fn = function () {
    return standIn(`${name}()`);
  };
  return new Proxy(fn, {
    get(_target, prop) {
      if (prop === 'then') return undefined; // not a thenable
      if (prop === Symbol.toPrimitive) return () => name;
      if (prop === 'event') return () => ({ dispose() {} });
      return standIn(`${name}.${String(prop)}`);
    },
    set: () => true,
    defineProperty: () => true,
    construct() {
      return standIn(`new ${name}`) as object;
    },
  });
}

type Resolve = (request: string, ...rest: unknown[]) => string;
const moduleWithResolve = Module as unknown as { _resolveFilename: Resolve; _cache: Record<string, unknown> };
const original = moduleWithResolve._resolveFilename;
const vscodeStub = path.join(os.tmpdir(), 'qs-measure-vscode-stub.js');
fs.writeFileSync(vscodeStub, 'module.exports = globalThis.__qsVscodeStandIn;\n');
// Own enumerable keys: the bundle's `import * as vscode` copies them (esbuild's __toESM).
const NAMESPACES = ['window', 'workspace', 'commands', 'debug', 'languages', 'extensions', 'env', 'tasks'];
const CLASSES = [
  'EventEmitter',
  'Disposable',
  'TreeItem',
  'ThemeIcon',
  'ThemeColor',
  'Uri',
  'MarkdownString',
];
(globalThis as Record<string, unknown>).__qsVscodeStandIn = Object.fromEntries(
  [
    ...NAMESPACES,
    ...CLASSES,
    'StatusBarAlignment',
    'TreeItemCollapsibleState',
    'ProgressLocation',
    'ConfigurationTarget',
    'LogLevel',
  ].map((n) => [n, standIn(n)]),
);
moduleWithResolve._resolveFilename = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? vscodeStub : original.call(this, request, ...rest);
};

const size = fs.statSync(bundle).size;
const t0 = performance.now();
const ext = Module.createRequire(__filename)(bundle) as { activate(context: unknown): unknown };
const t1 = performance.now();
const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-measure-'));
const context = {
  subscriptions: [] as unknown[],
  workspaceState: { get: () => undefined, update: async () => undefined },
  globalStorageUri: { fsPath: storage },
  extension: { packageJSON: { version: 'measure' } },
  asAbsolutePath: (p: string) => path.join(repoRoot, p),
};
try {
  ext.activate(context);
} catch (err) {
  console.error(
    `activate() threw with the stand-in vscode: ${err instanceof Error ? err.message : String(err)}`,
  );
}
const t2 = performance.now();
const loaded = Object.keys(moduleWithResolve._cache);
const heavy = LAZY.filter((file) => loaded.some((f) => f.includes(file)));
console.log(
  JSON.stringify({
    bundle: path.relative(repoRoot, bundle),
    bundleBytes: size,
    requireMs: Number((t1 - t0).toFixed(1)),
    activateMs: Number((t2 - t1).toFixed(1)),
    lazyFilesLoadedByActivation: heavy,
  }),
);
fs.rmSync(storage, { recursive: true, force: true });
process.exit(0);
