/*
 * Jest: TypeScript through @swc/jest (no type checking here: `npm run typecheck` does that).
 *
 * Two projects, together covering test/**\/*.test.ts except test/cluster/ (`npm run test:cluster`,
 * jest.cluster.config.js) and test/reliability/ (`npm run test:reliability`, jest.reliability.config.js):
 *   - unit:        test/unit/**  pure logic: no Temporal, no database, no socket (test/setup-unit-isolation.ts
 *                  fails a unit test that opens one). `npm run test:unit` runs only these, no global setup.
 *   - integration: everything else under test/: the real Temporal dev server, the time-skipping server
 *                  (test/workflows/time-skipping/), the sandbox, the API over HTTP, a browser.
 *
 * The global setup and teardown belong to the integration project, so jest runs them only when an
 * integration test is selected: test/global-setup.ts starts ONE Temporal dev server and ONE embedded store
 * and builds the workflow bundle once; see test/helpers/temporal.ts for how tests use them.
 */
'use strict';

/** @type {import('@swc/core').Options} */
const swcOptions = {
  swcrc: false,
  sourceMaps: 'inline',
  jsc: {
    parser: { syntax: 'typescript' },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
};

/** @type {import('jest').Config} */
const common = {
  testEnvironment: 'node',
  testTimeout: 60_000,
  transform: { '^.+\\.ts$': ['@swc/jest', swcOptions] },
  moduleFileExtensions: ['ts', 'js', 'json', 'node'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/.tools/'],
};

/** @type {import('jest').Config} */
module.exports = {
  maxWorkers: 2,
  testTimeout: 60_000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup-unit-isolation.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/global-teardown.ts',
      setupFiles: ['<rootDir>/test/setup-temporal-runtime.ts'],
      testPathIgnorePatterns: [
        ...common.testPathIgnorePatterns,
        '<rootDir>/test/unit/',
        // Needs Go and PostgreSQL and takes minutes: `npm run test:cluster` (jest.cluster.config.js).
        '<rootDir>/test/cluster/',
        // Starts and restarts its own Temporal server for minutes: `npm run test:reliability`.
        '<rootDir>/test/reliability/',
        // The history recorder is a tool (scripts/record-histories.js), not a test: out of normal runs.
        ...(process.env.RECORD_HISTORIES === '1'
          ? []
          : ['<rootDir>/test/workflows/record-histories.test.ts']),
      ],
    },
  ],
};
