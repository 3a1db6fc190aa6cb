import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    // In tests a `!` documents an expectation about data the test itself made.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
