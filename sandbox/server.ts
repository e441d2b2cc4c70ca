import formbody from '@fastify/formbody';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { Timers } from './clock';
import { resolveSandboxConfig, type ResolvedSandboxConfig, type SandboxConfigInput } from './config';
import { FlowContext } from './engine/context';
import { FaultInjector, type FaultRuleInput } from './faults';
import { apiRoutes } from './routes/api';
import faultsPlugin from './routes/faults';
import { useEnvelopeErrors } from './routes/sandbox-common';
import { simulationRoutes } from './routes/simulation';
import { threeDsRoutes } from './routes/three-ds';
import { widgetRoutes } from './routes/widgets';
import { SandboxState } from './state';
import { WebhookDispatcher } from './webhooks';

export interface StartSandboxOptions {
  /** 0 (default) picks a free port */
  port?: number;
  host?: string;
  /** a pino/fastify logger; none by default */
  logger?: FastifyBaseLogger;
}

export interface RunningSandbox {
  /** base URL, e.g. http://127.0.0.1:41234 (API at `${url}/api/v1`) */
  url: string;
  app: FastifyInstance;
  config: ResolvedSandboxConfig;
  state: SandboxState;
  faults: FaultInjector;
  dispatcher: WebhookDispatcher;
  close(): Promise<void>;
}

const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

function isResolved(c: SandboxConfigInput | ResolvedSandboxConfig): c is ResolvedSandboxConfig {
  return c.projects instanceof Map;
}

/** Starts the sandbox provider: signed /api/v1, payer pages and simulation routes under /sandbox. */
export async function startSandbox(
  config: SandboxConfigInput | ResolvedSandboxConfig,
  opts: StartSandboxOptions = {},
): Promise<RunningSandbox> {
  const cfg = isResolved(config) ? config : resolveSandboxConfig(config);
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    bodyLimit: cfg.bodyLimit,
  });
  // sbp/banks is a GET that carries a signed empty JSON body (spec, Endpoints).
  app.addHttpMethod('GET', { hasBody: true, overrideExisting: true });

  const state = new SandboxState(() => IDEMPOTENCY_TTL_MS * cfg.timeScale);
  const timers = new Timers(cfg.timeScale, (err) =>
    app.log.error(
      { err: { message: (err as Error).message, stack: (err as Error).stack } },
      'sandbox step failed',
    ),
  );
  const faults = new FaultInjector(cfg.faults as FaultRuleInput[]);
  const dispatcher = new WebhookDispatcher({
    serviceKey: cfg.serviceKey,
    timeScale: cfg.timeScale,
    faults,
    logger: app.log,
  });
  let listening = '';
  const ctx = new FlowContext({
    config: cfg,
    state,
    timers,
    dispatcher,
    publicUrl: () => cfg.publicUrl ?? listening,
    log: app.log,
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

  let closing: Promise<void> | undefined;
  return {
    url: listening,
    app,
    config: cfg,
    state,
    faults,
    dispatcher,
    close: () =>
      (closing ??= (async () => {
        timers.close();
        await dispatcher.close();
        await app.close();
      })()),
  };
}
