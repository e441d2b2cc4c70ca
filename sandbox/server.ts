import formbody from '@fastify/formbody';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Timers } from './clock';
import { resolveSandboxConfig, type ResolvedSandboxConfig, type SandboxConfigInput } from './config';
import { FlowContext } from './engine/context';
import type { Job } from './engine/job';
import { runJob } from './engine/jobs';
import { errorEnvelope } from './errors';
import { FaultInjector, type FaultRuleInput } from './faults';
import { apiRoutes } from './routes/api';
import faultsPlugin from './routes/faults';
import { useEnvelopeErrors } from './routes/sandbox-common';
import { simulationRoutes } from './routes/simulation';
import { threeDsRoutes } from './routes/three-ds';
import { widgetRoutes } from './routes/widgets';
import { rememberProjects } from './remembered-projects';
import { Scheduler, type ScheduledJob } from './scheduler';
import { SqliteStore } from './sqlite-store';
import { SandboxState } from './state';
import { MemoryStore, type SandboxStore } from './store';
import { WebhookDispatcher } from './webhooks';

export interface StartSandboxOptions {
  /** 0 (default) picks a free port */
  port?: number;
  host?: string;
  /** a pino/fastify logger; none by default */
  logger?: FastifyBaseLogger;
  /**
   * A folder where the sandbox keeps everything it remembers (`sandbox.sqlite`), so a restart on the
   * same folder continues where the last run stopped. Absent: in memory only, forgotten on close.
   */
  dataDir?: string;
}

/** The sandbox's file in its data folder. */
export const SANDBOX_STORE_FILE = 'sandbox.sqlite';

export interface RunningSandbox {
  /** base URL, e.g. http://127.0.0.1:41234 (API at `${url}/api/v1`) */
  url: string;
  app: FastifyInstance;
  config: ResolvedSandboxConfig;
  state: SandboxState;
  faults: FaultInjector;
  dispatcher: WebhookDispatcher;
  /** where the state is kept (`store.durable`: in a file) */
  store: SandboxStore;
  close(): Promise<void>;
}

function isResolved(c: SandboxConfigInput | ResolvedSandboxConfig): c is ResolvedSandboxConfig {
  return c.projects instanceof Map;
}

/** Starts the sandbox provider: signed /api/v1, payer pages and simulation routes under /sandbox. */
export async function startSandbox(
  config: SandboxConfigInput | ResolvedSandboxConfig,
  opts: StartSandboxOptions = {},
): Promise<RunningSandbox> {
  const resolved = isResolved(config) ? config : resolveSandboxConfig(config);
  const store: SandboxStore = opts.dataDir
    ? new SqliteStore(path.join(opts.dataDir, SANDBOX_STORE_FILE))
    : new MemoryStore();
  try {
    return await start(resolved, store, opts);
  } catch (err) {
    store.close();
    throw err;
  }
}

async function start(
  resolved: ResolvedSandboxConfig,
  store: SandboxStore,
  opts: StartSandboxOptions,
): Promise<RunningSandbox> {
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    bodyLimit: resolved.bodyLimit,
  });
  // sbp/banks is a GET that carries a signed empty JSON body (spec, Endpoints).
  app.addHttpMethod('GET', { hasBody: true, overrideExisting: true });

  const stored = store.load();
  const cfg = rememberProjects(resolved, stored.collections.projects, store, app.log);
  const state = new SandboxState(() => cfg.idempotencyTtlSeconds * 1000 * cfg.timeScale, store);
  const logStoreError = (err: unknown) =>
    app.log.error({ err: { message: (err as Error).message } }, 'sandbox store not written');
  const timers = new Timers(cfg.timeScale, (err) =>
    app.log.error(
      { err: { message: (err as Error).message, stack: (err as Error).stack } },
      'sandbox step failed',
    ),
  );
  const scheduler = new Scheduler<Job>(timers, store, logStoreError);
  const faults = new FaultInjector(cfg.faults as FaultRuleInput[]);
  const dispatcher = new WebhookDispatcher({
    serviceKey: cfg.serviceKey,
    timeScale: cfg.timeScale,
    faults,
    logger: app.log,
    store,
  });
  let listening = '';
  const ctx = new FlowContext({
    config: cfg,
    state,
    timers,
    scheduler,
    dispatcher,
    publicUrl: () => cfg.publicUrl ?? listening,
    log: app.log,
    faults,
  });
  scheduler.setRunner((job) => runJob(ctx, job));
  state.restore(stored);

  // Whatever a request changed is on disk before its answer leaves (registered first, so the
  // drop_after_commit fault, whose hook comes later, really drops after the commit).
  app.addHook('onSend', async (req, reply, payload) => {
    try {
      store.commit();
      return payload;
    } catch (err) {
      req.log.error({ err: { message: (err as Error).message } }, 'sandbox store not written');
      void reply.code(500).type('application/json; charset=utf-8');
      return JSON.stringify(errorEnvelope('internal_error', 'internal_error'));
    }
  });
  await app.register(faultsPlugin, { faults, dispatcher });
  await app.register(apiRoutes, { prefix: '/api/v1', ctx });
  await app.register(
    async (sandbox) => {
      await sandbox.register(formbody);
      // `curl -X POST -H 'content-type: application/json' .../pay` without a body is a normal way to press "Pay".
      sandbox.removeContentTypeParser('application/json');
      sandbox.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
        try {
          done(null, body === '' ? {} : JSON.parse(body as string));
        } catch {
          done(Object.assign(new Error('malformed JSON'), { statusCode: 400 }), undefined);
        }
      });
      useEnvelopeErrors(sandbox);
      await sandbox.register(simulationRoutes, { ctx });
      await sandbox.register(threeDsRoutes, { prefix: '/3ds', ctx });
      await sandbox.register(widgetRoutes, { prefix: '/widgets', ctx });
    },
    { prefix: '/sandbox' },
  );

  const host = opts.host ?? '127.0.0.1';
  await app.listen({ port: opts.port ?? 0, host });
  const address = app.server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  listening = `http://${shownHost}:${address.port}`;

  // What was pending when the last run stopped goes on now that the payer pages have an address:
  // overdue steps at once, in due order; webhooks to the projects' URLs as configured now.
  dispatcher.restore(
    { deliveries: stored.collections.webhook_deliveries, log: stored.logs.webhook_log },
    (projectId) => cfg.projects.get(projectId)?.webhookUrl,
  );
  scheduler.restore(stored.collections.jobs.values() as Iterable<ScheduledJob<Job>>);
  store.commit();

  let closing: Promise<void> | undefined;
  return {
    url: listening,
    app,
    config: cfg,
    state,
    faults,
    dispatcher,
    store,
    close: () =>
      (closing ??= (async () => {
        // Requests in flight finish (and commit) first; steps that come due meanwhile still run.
        await app.close();
        timers.close();
        await dispatcher.close();
        store.close();
      })()),
  };
}
