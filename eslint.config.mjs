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
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', '.tools/', 'node_modules/', 'coverage/', 'test-results/', '.data/']),
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
    // plain Node scripts (CommonJS)
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // workflow code runs in Temporal's deterministic sandbox: no Node built-ins
    files: [
      'workflows/**/*.ts',
      'common/search-attributes.ts',
      'common/events.ts',
      'common/event-delivery.ts',
      'test/fixtures/*workflow*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'os', 'crypto', 'child_process', 'http', 'https', 'net'],
              allowTypeImports: true,
              message: 'workflow code runs in a deterministic sandbox: no Node built-ins',
            },
          ],
        },
      ],
    },
  },
);
