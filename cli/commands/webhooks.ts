/**
 * `paysaga webhooks replay --session ps_...`: re-applies a session's recorded provider webhooks through
 * the same routing as a webhook (client/webhook-replay.ts, over the API's
 * `POST /v1/sessions/{id}/provider-events/replay`), printing what each did. A replay changes nothing that
 * was already applied: expect `duplicate` and `older`.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { ReplayReport } from '../../client/http';
import { apiClientFor, type ApiAccessOptions } from '../api-access';

export interface ReplayOptions extends ApiAccessOptions {
  session: string;
  json?: boolean;
}

export interface WebhooksCommandDeps {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

const processDeps: WebhooksCommandDeps = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

export function register(program: Command, deps: WebhooksCommandDeps = processDeps): void {
  const webhooks = program
    .command('webhooks')
    .description("the provider's webhooks as sessions recorded them");
  webhooks
    .command('replay')
    .description("re-apply a session's recorded provider webhooks through the webhook routing")
    .requiredOption('--session <id>', 'the session (ps_...)', parseSession)
    .option('--json', 'print the whole answer as JSON')
    .option('--data <dir>', 'data folder of a running `paysaga dev` (default PAYSAGA_DATA_DIR or .data)')
    .option('--api <url>', 'API base URL (default PAYSAGA_API_URL, else from `paysaga dev`, else :8081)')
    .option('--token <token>', 'API bearer token (default PAYSAGA_API_TOKEN, else <data>/api-token)')
    .action(async (opts: ReplayOptions) => {
      await replayWebhooks(opts, deps);
    });
}

function parseSession(value: string): string {
  if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(value)) throw new InvalidArgumentError('a session id (ps_...)');
  return value;
}

/** `<received at>  <type>  <via>  -> <delivery>[: <outcome>]` */
export function formatReplayLine(e: ReplayReport['events'][number]): string {
  const what = e.outcome ? `${e.delivery}: ${e.outcome}` : e.delivery;
  return `${e.receivedAt}  ${e.type.padEnd(24)}  ${e.via.padEnd(7)}  -> ${what}`;
}

export async function replayWebhooks(
  opts: ReplayOptions,
  deps: WebhooksCommandDeps = processDeps,
): Promise<ReplayReport> {
  const { api, apiUrl } = apiClientFor(opts, deps.env, { timeoutMs: 60_000 });
  try {
    deps.err(`replaying the recorded provider webhooks of ${opts.session} at ${apiUrl}`);
    const report = await api.sessions.replayProviderEvents(opts.session);
    if (opts.json) deps.out(JSON.stringify(report));
    else for (const e of report.events) deps.out(formatReplayLine(e));
    const counts = new Map<string, number>();
    for (const e of report.events) {
      const key = e.outcome ?? e.delivery;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
    deps.err(`${report.events.length} replayed${summary ? `: ${summary}` : ' (nothing recorded)'}`);
    return report;
  } finally {
    await api.close();
  }
}
