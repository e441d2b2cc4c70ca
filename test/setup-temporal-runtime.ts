/**
 * Jest setupFiles for the integration project: sets the Temporal Runtime's options, a quieter logger so worker
 * lifecycle INFO lines do not flood test output. Level: PAYSAGA_TEST_LOG_LEVEL (TRACE|DEBUG|INFO|WARN|ERROR,
 * default WARN). The SDK core's own logs are forwarded to it, and heard as a worker process hears them
 * (workers/lost-task.ts).
 *
 * Runs before each test file in a fresh module registry, so every file gets these options. A test file that
 * needs other Runtime options (e.g. telemetry) installs its own Runtime before it connects anything.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { LogEntry, LogLevel } from '@temporalio/worker';
import { noticeCoreLog } from '../workers/lost-task';

const LEVELS: LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];
const requested = (process.env.PAYSAGA_TEST_LOG_LEVEL ?? 'WARN').toUpperCase() as LogLevel;

const level = LEVELS.includes(requested) ? requested : 'WARN';
const printed = new DefaultLogger(level);

// The Runtime's options, not the Runtime: the SDK makes it with these when a test first connects a worker,
// and shuts it down when the last one closes. One made up front that forwards the core's logs would keep
// a test process that never used it from exiting.
Runtime.defaultOptions = {
  logger: new DefaultLogger(level, (entry: LogEntry) => {
    printed.log(entry.level, entry.message, entry.meta);
    noticeCoreLog(entry.level, entry.message);
  }),
  telemetryOptions: { logging: { filter: { core: level, other: 'ERROR' }, forward: {} } },
};
