/**
 * Prometheus metrics at GET /metrics: process defaults, HTTP requests by route pattern and status,
 * and provider webhooks by outcome. Both listeners of an API count into one registry, served by the
 * internal one; each API has its own registry, so several in one process (tests, `paysaga dev`) do
 * not collide.
 */
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { rootPlugin } from './root-plugin';

export interface ApiMetrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status_code'>;
  httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  /** outcome: signaled, late_event, unknown_session, rejected, error. */
  webhooks: Counter<'outcome'>;
  /** Error answers by their code (`session_failing`: a workflow that fails its tasks; alert on it). */
  errors: Counter<'code' | 'status_code'>;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'paysaga_http_requests_total',
      help: 'HTTP requests answered by the paysaga API',
      labelNames: ['method', 'route', 'status_code'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'paysaga_http_request_duration_seconds',
      help: 'Time to answer HTTP requests of the paysaga API',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    webhooks: new Counter({
      name: 'paysaga_webhooks_received_total',
      help: 'Provider webhooks received, by what became of them',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    errors: new Counter({
      name: 'paysaga_api_errors_total',
      help: 'Error answers of the paysaga API by error code (session_failing: a workflow failing its tasks)',
      labelNames: ['code', 'status_code'],
      registers: [registry],
    }),
  };
}

export const metricsPlugin = rootPlugin<{ metrics: ApiMetrics; serve: boolean }>(
  'paysaga-metrics',
  async (app, { metrics, serve }) => {
    app.addHook('onResponse', async (request, reply) => {
      // The route pattern, not the URL: session ids must not become label values.
      const labels = {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status_code: String(reply.statusCode),
      };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    });
    if (!serve) return;
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
      reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
    );
  },
);
