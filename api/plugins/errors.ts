/** One error handler for the whole API: every failure leaves as the error envelope. */
import { toApiError } from '../errors';
import type { ApiMetrics } from './metrics';
import { rootPlugin } from './root-plugin';

export const errorsPlugin = rootPlugin<{ metrics?: ApiMetrics }>('paysaga-errors', async (app, opts) => {
  app.setErrorHandler((err, request, reply) => {
    const api = toApiError(err);
    opts.metrics?.errors.inc({ code: api.code, status_code: String(api.statusCode) });
    if (api.code === 'session_failing') {
      // Not a fault of Temporal or of the caller: a workflow that needs a fix (or a rollback).
      request.log.error({ code: api.code, detail: api.message }, 'session workflow failing its tasks');
    } else if (api.statusCode >= 500) {
      // Our own error classes carry no request data, so the error itself may be logged.
      request.log.error({ err, code: api.code }, 'request failed');
    } else {
      request.log.info({ code: api.code, status: api.statusCode }, 'request refused');
    }
    return reply.code(api.statusCode).type('application/json; charset=utf-8').send(api.toEnvelope());
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({
      error: {
        code: 'not_found',
        message: `no route ${request.method} ${request.url.split('?')[0]}`,
        retryable: false,
      },
    }),
  );
});
