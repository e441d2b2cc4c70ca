// ESLint flat config: @eslint/js recommended + typescript-eslint recommended (no type-aware rules).

// Node globals for plain .js/.mjs files (in .ts files TypeScript itself checks undefined names).
const nodeGlobals = Object.fromEntries(
  [
    'require',
    'module',
    'exports',
    '__dirname',
    '__filename',
    'process',
    'console',
    'Buffer',
    'URL',
    'URLSearchParams',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'clearImmediate',
    'queueMicrotask',
    'structuredClone',
    'fetch',
    'AbortController',
    'AbortSignal',
    'TextEncoder',
    'TextDecoder',
    'globalThis',
  ].map((name) => [name, 'readonly']),
);
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';
import { layersConfig, WORKFLOW_SAFE } from './eslint.layers.mjs';
import { paysagaLocal } from './eslint.history-refs.mjs';

/** Packages that do I/O or need Node: never loaded into the workflow bundle (their types are fine). */
const NODE_ONLY_PACKAGES = [
  '@temporalio/activity',
  '@temporalio/client',
  '@temporalio/envconfig',
  '@temporalio/testing',
  '@temporalio/worker',
  '@fastify/*',
  'commander',
  'fastify',
  'node-sqlite3-wasm',
  'pino',
  'prom-client',
  'smol-toml',
  'undici',
];

const NO_BUILTINS = 'workflow code runs in a deterministic sandbox: no Node built-ins';

export default defineConfig(
  globalIgnores([
    'dist/',
    'packages/*/dist/',
    '.tools/',
    'node_modules/',
    'coverage/',
    'test-results/',
    '.data/',
  ]),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      globals: nodeGlobals,
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      eqeqeq: ['error', 'smart'],
      'no-console': 'off',
      'prefer-const': 'error',
    },
  },
  {
    // Comments and test names describe the code as it is, not its history (eslint.history-refs.mjs).
    plugins: { 'paysaga-local': paysagaLocal },
    rules: { 'paysaga-local/no-history-refs': 'error' },
  },
  layersConfig,
  {
    // plain Node scripts (CommonJS)
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, nothing that talks to the
    // world (types are fine). Which folders may reach workflow code at all: eslint.layers.mjs.
    files: [...WORKFLOW_SAFE.map((folder) => `${folder}/**/*.ts`), 'test/fixtures/*workflow*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          // exact names: a pattern `events` would also match '../common/events'
          paths: builtinModules.map((name) => ({ name, allowTypeImports: true, message: NO_BUILTINS })),
          patterns: [
            { group: ['node:*'], allowTypeImports: true, message: NO_BUILTINS },
            {
              group: NODE_ONLY_PACKAGES,
              allowTypeImports: true,
              message: 'workflow code runs in a deterministic sandbox: this package is for Node code only',
            },
          ],
        },
      ],
      // The worker loads these modules once per workflow thread for all its workflows (`preloadModules`,
      // workers/workflow-bundle-options.ts): a variable at module level would be shared by every workflow
      // of the thread, and one workflow's value would leak into another's run.
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "Program > VariableDeclaration[kind!='const'], ExportNamedDeclaration > VariableDeclaration[kind!='const']",
          message:
            'workflow code is loaded once for all the workflows of a thread: module-level state would be shared between them',
        },
      ],
    },
  },
);
