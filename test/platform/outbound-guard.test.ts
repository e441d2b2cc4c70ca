/**
 * The outbound edge: event endpoints may not reach inside the deployment. Every name here is
 * answered by a stub resolver, and the one connection a guard could open goes to a loopback listener
 * that counts connections: nothing in this file may reach any other address. A tripwire watches every
 * TCP socket created meanwhile and fails the test if one connects anywhere.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type Server, type Socket } from 'node:net';
import { OutboundGuard, outboundPolicyFromEnv } from '../../platform/outbound-guard';
import { refusal, stubResolver } from '../helpers/outbound';
import { sendEvent } from '../../workers/event-sender';
import type { PaysagaEvent } from '../../common/events';

/** Names and what they answer: private, link-local, loopback, mixed, and one public address. */
const ZONE: Record<string, string[]> = {
  'metadata.example': ['169.254.169.254'],
  'ten.example': ['10.1.2.3'],
  'home.example': ['192.168.1.20'],
  'cgnat.example': ['100.64.0.7'],
  'ula.example': ['fd00::5'],
  'mapped.example': ['::ffff:10.0.0.1'],
  'mixed.example': ['203.0.114.9', '172.20.0.3'],
  'public.example': ['203.0.114.9'],
  'loop.example': ['127.0.0.1'],
};
const lookups: string[] = [];
const stub = stubResolver(ZONE, (host) => lookups.push(host));
const strict = () =>
  new OutboundGuard({ allowHttp: false, allow: [], own: ['temporal', 'postgres'], resolve: stub });

describe('the outbound guard refuses what is inside', () => {
  const connected: string[] = [];
  const onSocket = (message: unknown) => {
    const socket = (message as { socket: Socket }).socket;
    socket.once('connect', () => connected.push(`${socket.remoteAddress}:${socket.remotePort}`));
  };
  beforeAll(() => subscribe('net.client.socket', onSocket));
  afterAll(() => unsubscribe('net.client.socket', onSocket));
  beforeEach(() => (lookups.length = 0));

  it.each([
    ['http://127.0.0.1:8080/hook', 'https'],
    ['https://127.0.0.1:8080/hook', 'public address'],
    ['https://169.254.169.254/latest/meta-data', 'public address'],
    ['https://[::1]/', 'public address'],
    ['https://[::ffff:127.0.0.1]/', 'public address'],
    ['https://[fe80::1]/', 'public address'],
    ['https://0.0.0.0/', 'public address'],
    ['https://metadata.example/', 'public address'],
    ['https://ten.example/', 'public address'],
    ['https://home.example/', 'public address'],
    ['https://cgnat.example/', 'public address'],
    ['https://ula.example/', 'public address'],
    ['https://mapped.example/', 'public address'],
    ['https://mixed.example/', 'public address'],
    ['https://temporal:7233/', 'outside this deployment'],
    ['https://user:pw@public.example/', 'without credentials'],
    ['ftp://public.example/', 'http:// or https://'],
  ])('%s is refused (%s)', async (url, rule) => {
    expect(await refusal(strict(), url)).toContain(rule);
    expect(connected).toEqual([]);
  });

  it('a public name is accepted, and a name that does not resolve yet is left to the delivery check', async () => {
    expect(await refusal(strict(), 'https://public.example/hooks')).toBeUndefined();
    expect(await refusal(strict(), 'https://not-yet.example/hooks')).toBeUndefined();
    expect(lookups).toEqual(['public.example', 'not-yet.example']);
  });

  it('http and loopback pass only where configuration allows them; an allow-list names hosts or ranges', async () => {
    const dev = new OutboundGuard({
      allowHttp: true,
      allow: ['localhost', '127.0.0.0/8', '::1'],
      resolve: stub,
    });
    expect(await refusal(dev, 'http://127.0.0.1:9/x')).toBeUndefined();
    expect(await refusal(dev, 'http://[::1]:9/x')).toBeUndefined();
    expect(await refusal(dev, 'http://loop.example/x')).toBeUndefined();
    expect(await refusal(dev, 'http://localhost/x')).toBeUndefined();
    expect(await refusal(dev, 'http://ten.example/x')).toContain('public address');
    const named = new OutboundGuard({
      allowHttp: false,
      allow: ['ten.example', '192.168.1.0/24'],
      resolve: stub,
    });
    expect(await refusal(named, 'https://ten.example/')).toBeUndefined();
    expect(await refusal(named, 'https://home.example/')).toBeUndefined();
    expect(await refusal(named, 'https://metadata.example/')).toContain('public address');
  });

  it('the environment: PAYSAGA_EVENT_ALLOW_HTTP and PAYSAGA_EVENT_ALLOW_HOSTS, checked at start', () => {
    expect(outboundPolicyFromEnv({})).toEqual({ allowHttp: false, allow: [], own: [] });
    expect(
      outboundPolicyFromEnv({
        PAYSAGA_EVENT_ALLOW_HTTP: 'true',
        PAYSAGA_EVENT_ALLOW_HOSTS: 'hooks.internal, 10.0.0.0/8',
      }),
    ).toMatchObject({ allowHttp: true, allow: ['hooks.internal', '10.0.0.0/8'] });
    expect(() => outboundPolicyFromEnv({ PAYSAGA_EVENT_ALLOW_HTTP: 'yes' })).toThrow(
      new Error('PAYSAGA_EVENT_ALLOW_HTTP must be true or false, got yes'),
    );
    expect(() => outboundPolicyFromEnv({ PAYSAGA_EVENT_ALLOW_HOSTS: '10.0.0.0/99' })).toThrow(
      new Error('not an address range: 10.0.0.0/99'),
    );
  });

  describe('at each delivery', () => {
    let server: Server;
    let port = 0;
    let accepted = 0;
    const open = new Set<Socket>();
    beforeAll(async () => {
      server = createServer((socket) => {
        accepted++;
        open.add(socket);
        socket.end('HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(async () => {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    });
    const event = { id: 'evt_ps_1_1', type: 'session.succeeded' } as unknown as PaysagaEvent;
    const send = (guard: OutboundGuard, url: string) =>
      sendEvent({ url, event, secrets: ['s'.repeat(32)], timeoutMs: 5_000, guard });

    it('a name that now resolves to a refused address gets no connection; the log says why, no address', async () => {
      // loop.example points at the listener above: only the guard stands between them.
      const guard = new OutboundGuard({ allowHttp: true, allow: [], resolve: stub });
      const before = connected.length;
      const attempt = await send(guard, `http://loop.example:${port}/hook`);
      expect(attempt.status).toBeUndefined();
      expect(attempt.error).toBe(
        'refused by the outbound guard: a public address (loop.example resolves to a loopback, link-local, private or reserved address; PAYSAGA_EVENT_ALLOW_HOSTS can name it)',
      );
      expect(attempt.error).not.toContain('127.0.0.1');
      const literal = await send(guard, `http://127.0.0.1:${port}/hook`);
      expect(literal.error).toBe(
        'refused by the outbound guard: a public address (127.0.0.1 resolves to a loopback, link-local, private or reserved address; PAYSAGA_EVENT_ALLOW_HOSTS can name it)',
      );
      expect(accepted).toBe(0);
      expect(connected.length).toBe(before);
      await guard.close();
    });

    it('an allowed name is delivered to, through the same lookup; a connection failure names no address', async () => {
      const guard = new OutboundGuard({ allowHttp: true, allow: ['127.0.0.1'], resolve: stub });
      const attempt = await send(guard, `http://loop.example:${port}/hook`);
      expect(attempt).toMatchObject({ status: 204 });
      expect(accepted).toBe(1);
      // The tripwire sees real connections (so its silence above means something).
      expect(connected).toEqual([`127.0.0.1:${port}`]);
      const closed = await new Promise<number>((resolve) => {
        const s = createServer();
        s.listen(0, '127.0.0.1', () => {
          const p = (s.address() as { port: number }).port;
          s.close(() => resolve(p));
        });
      });
      const refused = await send(guard, `http://loop.example:${closed}/hook`);
      expect(refused.error).toBe('connection refused');
      await guard.close();
    });
  });
});
