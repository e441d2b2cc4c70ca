/*
 * Jest for `npm run test:reliability` only (test/reliability/): the reliability suite starts its own
 * Temporal dev server (which it restarts), sandbox, worker and API processes, so it runs alone, one file
 * at a time, outside `npm test` (jest.config.js leaves test/reliability/ out). No global setup.
 */
'use strict';

const base = require('./jest.config.js');
const integration = base.projects.find((p) => p.displayName === 'integration');

/** @type {import('jest').Config} */
module.exports = {
  displayName: 'reliability',
  testEnvironment: 'node',
  transform: integration.transform,
  moduleFileExtensions: integration.moduleFileExtensions,
  testMatch: ['<rootDir>/test/reliability/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/.tools/'],
  setupFiles: ['<rootDir>/test/setup-temporal-runtime.ts'],
  maxWorkers: 1,
  // Each test and hook sets its own bound; this is the default for the rest.
  testTimeout: 60_000,
};
