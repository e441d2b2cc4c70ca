/**
 * A prompt, graceful close. fastify stops new connections and reaps idle keep-alive sockets when it
 * closes, but a request already running keeps its socket open after answering, until the
 * keep-alive timeout (72 s): `paysaga api` would linger that long after SIGTERM. Answers sent once
 * closing has begun say `Connection: close`, so each socket ends with its last answer.
 */
import { rootPlugin } from './root-plugin';

export const drainPlugin = rootPlugin('paysaga-drain', async (app) => {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    return payload;
  });
});
