/**
 * Jest setupFiles for the integration project: installs the Temporal Runtime with a quieter logger so worker
 * lifecycle INFO lines do not flood test output. Level: PAYSAGA_TEST_LOG_LEVEL (TRACE|DEBUG|INFO|WARN|ERROR,
 * default WARN). The SDK core's own logs are forwarded to it, and heard as a worker process hears them
 * (workers/lost-task.ts).
 *
 * Runs before each test file in a fresh module registry, so every file gets this Runtime. A test file that
 * needs other Runtime options (e.g. telemetry) must live outside the integration project.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { LogEntry, LogLevel } from '@temporalio/worker';
import { noticeCoreLog } from '../workers/lost-task';

const LEVELS: LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];
const requested = (process.env.PAYSAGA_TEST_LOG_LEVEL ?? 'WARN').toUpperCase() as LogLevel;

const level = LEVELS.includes(requested) ? requested : 'WARN';
const printed = new DefaultLogger(level);

Runtime.install({
  logger: new DefaultLogger(level, (entry: LogEntry) => {
    printed.log(entry.level, entry.message, entry.meta);
    noticeCoreLog(entry.level, entry.message);
  }),
  telemetryOptions: { logging: { filter: { core: level, other: 'ERROR' }, forward: {} } },
});
