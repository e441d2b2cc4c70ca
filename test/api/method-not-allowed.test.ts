/** api/plugins/method-not-allowed.ts: 405 with `Allow` for a known path under another method. */
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { errorsPlugin } from '../../api/plugins/errors';
import { methodNotAllowedPlugin } from '../../api/plugins/method-not-allowed';

describe('405 Method Not Allowed', () => {
  let app: FastifyInstance;
  let base: string;
  const send = async (method: string, url: string) => {
    const res = await request(`${base}${url}`, { method });
    const text = await res.body.text();
    return { statusCode: res.statusCode, headers: res.headers, json: () => JSON.parse(text) as unknown };
  };

  beforeAll(async () => {
    app = Fastify();
    await app.register(errorsPlugin);
    await app.register(methodNotAllowedPlugin);
    await app.register(
      async (v1) => {
        v1.get('/sessions/:id', async () => ({ ok: true }));
        v1.post('/sessions/:id/approve', async () => ({ ok: true }));
        v1.post('/checkouts', async () => ({ ok: true }));
        v1.get('/checkouts', async () => ({ ok: true }));
      },
      { prefix: '/v1' },
    );
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app.close());

  it.each([
    ['DELETE', '/v1/sessions/ps_1', 'GET, HEAD'],
    ['TRACE', '/v1/sessions/ps_1?wait=5', 'GET, HEAD'],
    ['GET', '/v1/sessions/ps_1/approve', 'POST'],
    ['PUT', '/v1/checkouts', 'GET, HEAD, POST'],
  ])('%s %s: 405, Allow: %s', async (method, url, allow) => {
    const res = await send(method, url);
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.json()).toEqual({
      error: { code: 'method_not_allowed', message: expect.stringContaining(method), retryable: false },
    });
  });

  it('QUERY without a content type (fastify refuses it before routing) gets 405 too', async () => {
    const res = await send('QUERY', '/v1/sessions/ps_1');
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('an unknown path stays 404; a known method answers as usual', async () => {
    expect((await send('DELETE', '/v1/nothing')).statusCode).toBe(404);
    expect((await send('GET', '/v1/sessions/ps_1/approve/more')).statusCode).toBe(404);
    expect((await send('HEAD', '/v1/sessions/ps_1')).statusCode).toBe(200);
    expect((await send('POST', '/v1/sessions/ps_1/approve')).statusCode).toBe(200);
  });
});
