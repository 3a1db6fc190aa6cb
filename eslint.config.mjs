import { readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// ---- layers (docs/architecture.md, "Dependency rules") -------------------------------------
// What each folder must not import. ESLint's no-restricted-imports matches the import as
// written, not the file it names, and folder names recur (extension/sidecar/ is not sidecar/),
// so each rule is written for every depth a file can sit at below its folder.
const TOP = ['agent', 'core', 'deploy', 'demo', 'extension', 'fixtures', 'laptop', 'sidecar', 'test'];
const everythingBut = (...allowed) => TOP.filter((folder) => !allowed.includes(folder));
/** The providers: each has a core module folder (core/providers/<provider>/), read from there so
 * that adding a provider adds its rules without a line here. */
const PROVIDERS = readdirSync(join(import.meta.dirname, 'core/providers'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
const others = (provider, folderOf) => PROVIDERS.filter((p) => p !== provider).map(folderOf);

/** Folder → the repository paths (folders or files, from the root) it must not import. */
const LAYERS = [
  // Contracts: core depends on nothing of ours.
  {
    folder: 'core',
    banned: everythingBut('core'),
    why: 'core imports nothing of ours (it is the contracts)',
  },
  // A provider's core module: core's leaf helpers, never the registry (which imports it) nor
  // another provider.
  ...PROVIDERS.map((provider) => ({
    folder: `core/providers/${provider}`,
    banned: [
      ...everythingBut('core'),
      'core/providers/registry',
      ...others(provider, (p) => `core/providers/${p}`),
    ],
    why: "a provider's core module imports core's helpers, never the provider registry or another provider",
  })),
  // The engine kernel knows no provider and no caller.
  {
    folder: 'agent/engine',
    banned: [
      ...everythingBut('core', 'agent'),
      ...PROVIDERS.map((p) => `agent/${p}`),
      'agent/providers',
      'agent/controller',
      'agent/queueAgent',
      'agent/sessionStream',
      'agent/kube',
    ],
    why: 'the engine kernel imports core and the agent log only',
  },
  // A provider module: core, the kernel, the provider contract, the session reader contract.
  ...PROVIDERS.map((provider) => ({
    folder: `agent/${provider}`,
    banned: [
      ...everythingBut('core', 'agent'),
      'agent/controller',
      'agent/queueAgent',
      'agent/kube',
      'agent/providers/registry',
      'agent/sessionStream/sessionServer',
      'core/providers/registry',
      ...others(provider, (p) => `agent/${p}`),
    ],
    why: 'a provider imports core, the engine kernel and the provider and reader contracts, never another provider',
  })),
  { folder: 'agent', banned: everythingBut('core', 'agent'), why: 'the agent imports core only' },
  {
    folder: 'extension',
    banned: everythingBut('core', 'laptop', 'deploy', 'extension'),
    why: 'the extension never imports agent or sidecar internals',
  },
  {
    folder: 'sidecar',
    banned: everythingBut('core', 'laptop', 'sidecar'),
    why: 'the sidecar imports core and laptop only',
  },
  { folder: 'laptop', banned: everythingBut('core', 'laptop'), why: 'laptop code imports core only' },
  { folder: 'deploy', banned: everythingBut('core', 'deploy'), why: 'deploy imports core only' },
  { folder: 'fixtures', banned: everythingBut('core', 'fixtures'), why: 'fixtures import core only' },
  {
    folder: 'demo',
    banned: everythingBut('core', 'deploy', 'fixtures', 'demo'),
    why: 'nothing imports test',
  },
  { folder: 'test', banned: ['demo'], why: 'nothing imports the demo (shared fixtures live in fixtures/)' },
];

/** An import path as written: a sibling is `./name` (a bare `name` would match any segment). */
const asImport = (relative) => (relative.startsWith('.') ? relative : `./${relative}`);

/** The no-restricted-imports rule for a file in `dir` that must not import `banned`. */
function bannedFrom(dir, banned, why) {
  return {
    'no-restricted-imports': [
      'error',
      {
        patterns: banned.map((path) => {
          const relative = asImport(posix.relative(dir, path));
          return { group: [relative, `${relative}/**`], message: why };
        }),
      },
    ],
  };
}

/** One config per folder and depth: `banned` as the relative paths a file there would write. */
function layerConfigs({ folder, banned, why }) {
  return [0, 1, 2, 3, 4].map((below) => ({
    files: [`${folder}/${'*/'.repeat(below)}*.ts`],
    rules: bannedFrom(`${folder}${'/d'.repeat(below)}`, banned, why),
  }));
}

// A provider's files in the laptop and sidecar folders (laptop/<provider>.ts,
// sidecar/providers/<provider>.ts, sidecar/consumers/<provider>.ts): never another provider's,
// never a provider table (each table imports them).
const TABLES = ['core/providers/registry', 'laptop/providers/registry', 'sidecar/providers/registry'];
const PROVIDER_FILES = PROVIDERS.flatMap((provider) => {
  const laptopFiles = (p) => [`laptop/${p}`];
  const sidecarFiles = (p) => [`sidecar/providers/${p}`, `sidecar/consumers/${p}`];
  const why =
    "a provider's laptop and sidecar files import their own provider's code, never another provider's or a provider table";
  return [
    ...laptopFiles(provider).map((file) => ({
      file,
      banned: [
        ...everythingBut('core', 'laptop'),
        ...TABLES,
        'laptop/brokerConnection',
        ...others(provider, laptopFiles).flat(),
      ],
      why,
    })),
    ...sidecarFiles(provider).map((file) => ({
      file,
      banned: [
        ...everythingBut('core', 'laptop', 'sidecar'),
        ...TABLES,
        ...others(provider, (p) => [...laptopFiles(p), ...sidecarFiles(p)]).flat(),
      ],
      why,
    })),
  ];
});

function fileConfig({ file, banned, why }) {
  return { files: [`${file}.ts`], rules: bannedFrom(posix.dirname(file), banned, why) };
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-test/**',
      'node_modules/**',
      '.env-run/**',
      '.vscode-test/**',
      'test-results/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      // Kubernetes client types mark every field optional, even those the API server always
      // returns (metadata.name on a read object); `!` states that contract where it holds.
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'it', property: 'only', message: 'Focused tests hide the rest of the suite.' },
        { object: 'test', property: 'only', message: 'Focused tests hide the rest of the suite.' },
        { object: 'describe', property: 'only', message: 'Focused tests hide the rest of the suite.' },
        {
          object: 'it',
          property: 'skip',
          message: 'A test that cannot run must fail loudly with its reason.',
        },
        {
          object: 'test',
          property: 'skip',
          message: 'A test that cannot run must fail loudly with its reason.',
        },
        {
          object: 'describe',
          property: 'skip',
          message: 'A test that cannot run must fail loudly with its reason.',
        },
      ],
    },
  },
  {
    // Type-aware rules: a promise nobody awaits or catches, a promise where a callback's result
    // is ignored, and a switch over a union that misses a member.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test registers these itself and reports their failures.
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      // A `default:` ending in assertNever keeps a switch exhaustive; one without is a choice.
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
    },
  },
  {
    // In tests a `!` documents an expectation about data the test itself made.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  // Later configs win for a file matched by several: the folder rules go from general to
  // specific (agent, then its kernel and providers).
  ...[
    'core',
    ...PROVIDERS.map((p) => `core/providers/${p}`),
    'agent',
    'agent/engine',
    ...PROVIDERS.map((p) => `agent/${p}`),
    'extension',
    'sidecar',
    'laptop',
    'deploy',
    'fixtures',
    'demo',
    'test',
  ].flatMap((folder) => layerConfigs(LAYERS.find((layer) => layer.folder === folder))),
  ...PROVIDER_FILES.map(fileConfig),
);
