/** One error handler for the whole API: every failure leaves as the error envelope. */
import { toApiError } from '../errors';
import { rootPlugin } from './root-plugin';

export const errorsPlugin = rootPlugin('paysaga-errors', async (app) => {
  app.setErrorHandler((err, request, reply) => {
    const api = toApiError(err);
    if (api.statusCode >= 500) {
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
