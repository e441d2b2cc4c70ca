/**
 * Jest setupFiles for the integration project: installs the Temporal Runtime with a quieter logger so worker
 * lifecycle INFO lines do not flood test output. Level: PAYSAGA_TEST_LOG_LEVEL (TRACE|DEBUG|INFO|WARN|ERROR,
 * default WARN).
 *
 * Runs before each test file in a fresh module registry, so every file gets this Runtime. A test file that
 * needs other Runtime options (e.g. telemetry) must live outside the integration project.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { LogLevel } from '@temporalio/worker';

const LEVELS: LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];
const requested = (process.env.PAYSAGA_TEST_LOG_LEVEL ?? 'WARN').toUpperCase() as LogLevel;

Runtime.install({ logger: new DefaultLogger(LEVELS.includes(requested) ? requested : 'WARN') });
