/**
 * The outbound edge end to end: an API under the production policy (https only, public
 * addresses only) refuses endpoints inside the deployment with a 400 naming `url` and registers
 * nothing; a name that resolved to an allowed address at registration and later resolves to a private
 * one gets no delivery, and its delivery log says why without naming any address.
 *
 * Every name is answered by a stub resolver; the only listener is the test's receiver on 127.0.0.1.
 * A tripwire fails the test if any socket connects anywhere but loopback.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { buildApi } from '../../api/app';
import { DEFAULT_EVENT_DELIVERY } from '../../common/event-delivery';
import type { OutboundPolicy } from '../../platform/outbound-guard';
import { apiDepsFor, listenLocally, useApiStack } from '../api/api-stack';
import {
  newSubject,
  sessionLife,
  startEventPublisher,
  startEventReceiver,
  type EventPublisher,
} from '../helpers/events';
import { until } from '../helpers/until';
import { request } from 'undici';

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are inspected field by field */

/** The stub DNS: tests change where `moving.example` points. */
const zone = new Map<string, string[]>([
  ['localhost', ['127.0.0.1']],
  ['metadata.example', ['169.254.169.254']],
  ['office.example', ['10.20.30.40']],
  ['home.example', ['192.168.0.10']],
  ['shop.example', ['203.0.114.10']],
  ['moving.example', ['127.0.0.1']],
]);
const resolve = async (host: string) => {
  const found = zone.get(host);
  if (!found) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

/** The test stack's own policy: plain http to loopback (its receiver), names from the stub zone. */
const devPolicy: OutboundPolicy = { allowHttp: true, allow: ['127.0.0.0/8'], resolve };
/** What a production deployment runs with (no PAYSAGA_EVENT_ALLOW_* set). */
const productionPolicy: OutboundPolicy = {
  allowHttp: false,
  allow: [],
  own: ['temporal', 'postgres'],
  resolve,
};

describe('the outbound edge', () => {
  const api = useApiStack({
    webhooks: false,
    events: {
      outbound: devPolicy,
      policy: {
        ...DEFAULT_EVENT_DELIVERY,
        retryForMs: 60_000,
        initialRetryMs: 200,
        maxRetryMs: 500,
        timeoutMs: 2_000,
      },
    },
  });
  const foreign: string[] = [];
  const onSocket = (message: unknown) => {
    const socket = (message as { socket: Socket }).socket;
    socket.once('connect', () => {
      if (socket.remoteAddress !== '127.0.0.1' && socket.remoteAddress !== '::1')
        foreign.push(`${socket.remoteAddress}:${socket.remotePort}`);
    });
  };
  let publisher: EventPublisher;
  beforeAll(async () => {
    subscribe('net.client.socket', onSocket);
    publisher = await startEventPublisher();
  });
  afterAll(async () => {
    unsubscribe('net.client.socket', onSocket);
    await publisher?.close();
    expect(foreign).toEqual([]);
  });

  test('a production API refuses endpoints inside the deployment: 400 naming url, nothing registered', async () => {
    const strict = buildApi({
      ...apiDepsFor(api.stack),
      events: { signingKeys: api.stack.signingKeys, outbound: productionPolicy },
      apiTokens: ['strict'],
    });
    try {
      const { v1Url } = await listenLocally(strict);
      const call = async (method: 'GET' | 'POST', body?: unknown) => {
        const res = await request(`${v1Url}/v1/event-endpoints`, {
          method,
          headers: { authorization: 'Bearer strict', 'content-type': 'application/json' },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        return { status: res.statusCode, body: (await res.body.json()) as any };
      };
      const before = (await call('GET')).body.endpoints;
      const refused: [string, string][] = [
        ['https://127.0.0.1:8443/hook', 'public address'],
        ['http://169.254.169.254/latest/meta-data/', 'https://'],
        ['https://169.254.169.254/latest/meta-data/', 'public address'],
        ['https://[::1]/hook', 'public address'],
        ['https://metadata.example/', 'public address'],
        ['https://office.example/hook', 'public address'],
        ['https://home.example/hook', 'public address'],
        ['https://temporal:7233/', 'outside this deployment'],
        ['http://shop.example/hook', 'https://'],
      ];
      for (const [url, rule] of refused) {
        const res = await call('POST', { url });
        expect([url, res.status, res.body.error?.fields?.[0]?.field]).toEqual([url, 400, 'url']);
        expect(res.body.error.fields[0].rule).toContain(rule);
      }
      expect((await call('GET')).body.endpoints).toEqual(before);
      const ok = await call('POST', { url: 'https://shop.example/paysaga/events' });
      expect(ok.status).toBe(201);
    } finally {
      await strict.close();
    }
  });

  test('a name that starts resolving to a private address gets no delivery; the log names no address', async () => {
    const receiver = await startEventReceiver();
    const port = new URL(receiver.url).port;
    try {
      const res = await api.call('POST', '/v1/event-endpoints', {
        body: { url: `http://moving.example:${port}/events` },
      });
      expect(res.status).toBe(201);
      const [first, second] = sessionLife(newSubject(), ['session.created', 'session.succeeded']);
      await publisher.publish(api.stack.taskQueue, [first!]);
      await receiver.until((r) => r.accepted().length === 1, 'the first event delivered');

      zone.set('moving.example', ['10.0.0.7']); // DNS changed after registration
      await publisher.publish(api.stack.taskQueue, [second!]);
      const log = await until(
        'a refused attempt in the delivery log',
        async () => (await api.call('GET', `/v1/events/${second!.id}/deliveries`)).body,
        (b) => JSON.stringify(b).includes('refused by the outbound guard'),
        30_000,
      );
      expect(receiver.deliveries).toHaveLength(1);
      const text = JSON.stringify(log);
      expect(text).toContain('a public address');
      expect(text).not.toMatch(/10\.0\.0\.7|127\.0\.0\.1/);
      await api.call('DELETE', `/v1/event-endpoints/${res.body.id}`);
    } finally {
      zone.set('moving.example', ['127.0.0.1']);
      await receiver.close();
    }
  });
});
