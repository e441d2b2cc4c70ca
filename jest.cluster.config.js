/*
 * Jest for `npm run test:cluster` only (test/cluster/): paysaga on a real Temporal server built from
 * source, on PostgreSQL, with several worker and API processes. Not part of `npm test` (jest.config.js
 * leaves test/cluster/ out): it needs Go and PostgreSQL and takes minutes. No global setup: the test
 * starts (and stops) everything it uses itself.
 */
'use strict';

const base = require('./jest.config.js');
const integration = base.projects.find((p) => p.displayName === 'integration');

/** @type {import('jest').Config} */
module.exports = {
  displayName: 'cluster',
  testEnvironment: 'node',
  transform: integration.transform,
  moduleFileExtensions: integration.moduleFileExtensions,
  testMatch: ['<rootDir>/test/cluster/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/.tools/'],
  setupFiles: ['<rootDir>/test/setup-temporal-runtime.ts'],
  maxWorkers: 1,
  // Each test and hook sets its own bound; this is the default for the rest.
  testTimeout: 60_000,
};
