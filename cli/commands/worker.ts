/**
 * `paysaga worker`: the Temporal worker alone (every session workflow and its activities), configured
 * by environment variables (cli/README.md). Stops gracefully on SIGINT / SIGTERM (the SDK's shutdown
 * signals): polling stops, in-flight activities get up to 10 s.
 */
import type { Command } from 'commander';
import type { startWorkerFromEnv as StartWorkerFromEnv } from '../../workers/main';

export function register(program: Command): void {
  program
    .command('worker')
    .description(
      'run the Temporal worker (session workflows and activities); configured by the standard Temporal ' +
        'client variables (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, ' +
        'TEMPORAL_PROFILE), PAYSAGA_TASK_QUEUE and the PAYSAGA_PROVIDER_* / PAYSAGA_PROJECT_ID / ' +
        'PAYSAGA_PARTNER_PRIVATE_KEY environment variables; JSON logs on stdout (PAYSAGA_LOG_LEVEL)',
    )
    .action(async () => {
      // Loaded lazily so the other commands start without the worker's native module.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { startWorkerFromEnv } = require('../../workers/main') as {
        startWorkerFromEnv: typeof StartWorkerFromEnv;
      };
      let running;
      try {
        running = await startWorkerFromEnv();
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw new Error(
          `${message}\n(the worker is configured by TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, ` +
            'TEMPORAL_TLS_*, TEMPORAL_PROFILE, PAYSAGA_TASK_QUEUE, ' +
            'PAYSAGA_PROVIDER_URL, PAYSAGA_PROJECT_ID, PAYSAGA_PARTNER_PRIVATE_KEY, PAYSAGA_CODEC_KEYS: see cli/README.md)',
          { cause: err },
        );
      }
      await running.done;
      // The process should now end by itself; should a stray handle keep it alive, do not hang on shutdown.
      setTimeout(() => process.exit(), 3_000).unref();
    });
}
