/**
 * Outbound events with `paysaga worker` as a real process, configured only by its environment:
 * PAYSAGA_EVENT_ENDPOINTS (an endpoint without any API call, its secret never in Temporal),
 * PAYSAGA_EVENT_* timings, the payload codec, deliveries on the worker's own `<task queue>-events`.
 * The worker is SIGKILLed while a delivery is in flight (the receiver holds the request); a second
 * worker takes over: every event arrives, in order, each id accepted once, nothing lost.
 */
import { buildApi, type PaysagaApi } from '../../api/app';
import { listenLocally } from '../api/api-stack';
import { PaymentsClient } from '../../client/payments-client';
import { DEFAULT_SETTINGS } from '../../common/settings';
import { verifyPaysagaEvent } from '../../client/http';
import { EncryptionCodec, generateCodecKeySpec, parseCodecKeys } from '../../platform/codec';
import { createWebhookVerifier, ProviderClient } from '../../provider';
import {
  acceptedBySubject,
  newSubject,
  sessionEvent,
  startEventPublisher,
  startEventReceiver,
  type EventPublisher,
  type EventReceiver,
} from '../helpers/events';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { connectTestClient, uniqueTaskQueue, type TestClient } from '../helpers/temporal';
import { testStore, type TestStore } from '../helpers/store';
import { spawnWorkerProcess, type WorkerProcess } from '../helpers/worker-process';
import { request } from 'undici';
import { testOutboundPolicy } from '../helpers/outbound';

const SECRET = 'whsec_configured_0123456789abcdef';
const TIMEOUT_MS = 3_000;

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('paysaga worker (process): configured endpoints, and a kill in mid-delivery', () => {
  const codecKeys = generateCodecKeySpec('evt');
  const dataConverter = { payloadCodecs: [new EncryptionCodec(parseCodecKeys(codecKeys))] };
  const taskQueue = uniqueTaskQueue('events-process');
  let sandbox: TestSandbox;
  let store: TestStore;
  let temporal: TestClient;
  let provider: ProviderClient;
  let publisher: EventPublisher;
  let receiver: EventReceiver;
  let api: PaysagaApi;
  let apiUrl: string;
  const workers: WorkerProcess[] = [];

  const spawn = async (endpoints: string) => {
    const w = spawnWorkerProcess(sandbox, taskQueue, {
      ...store.env,
      PAYSAGA_CODEC_KEYS: codecKeys,
      PAYSAGA_EVENT_ENDPOINTS: endpoints,
      PAYSAGA_EVENT_TIMEOUT_MS: String(TIMEOUT_MS),
      PAYSAGA_EVENT_RETRY_INITIAL_MS: '200',
      PAYSAGA_EVENT_RETRY_MAX_MS: '1000',
      PAYSAGA_EVENT_RETRY_FOR_MS: '120000',
      PAYSAGA_LOG_LEVEL: 'info',
    });
    workers.push(w);
    await w.polling();
    return w;
  };
  const kill = async (w: WorkerProcess) => {
    if (w.child.exitCode !== null || w.child.signalCode !== null) return;
    w.child.kill('SIGKILL');
    await within(w.exited, 10_000, 'the killed worker exits');
  };
  const call = async (method: 'GET' | 'POST' | 'DELETE', path: string) => {
    const res = await request(`${apiUrl}${path}`, { method, headers: { authorization: 'Bearer t' } });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined, text };
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox({ projects: [{ webhooks: false }] });
    store = await testStore();
    temporal = await connectTestClient({ dataConverter });
    provider = new ProviderClient({
      baseUrl: sandbox.url,
      projectId: sandbox.projectId,
      privateKey: sandbox.keys.partner.privateKey,
    });
    publisher = await startEventPublisher({ dataConverter });
    receiver = await startEventReceiver();
    api = buildApi({
      store,
      events: { outbound: testOutboundPolicy() },
      payments: new PaymentsClient({ temporal: temporal.client, provider, store, taskQueue }),
      provider,
      temporal: temporal.client,
      taskQueue,
      settings: DEFAULT_SETTINGS,
      verifyWebhook: createWebhookVerifier([sandbox.keys.service.publicPem]),
      apiTokens: ['t'],
    });
    apiUrl = (await listenLocally(api)).v1Url;
  }, 120_000);

  afterAll(async () => {
    for (const w of workers) await kill(w).catch(() => undefined);
    await api?.close();
    await receiver?.close();
    await publisher?.close();
    await provider?.close();
    await temporal?.close();
    await sandbox?.close();
    await store?.close();
  });

  test('a configured endpoint is listed without its secret and cannot be changed through the API', async () => {
    await spawn(
      JSON.stringify([{ url: receiver.url, secret: SECRET, id: 'backend', description: 'from config' }]),
    );
    const listing = await call('GET', '/v1/event-endpoints');
    expect(listing.status).toBe(200);
    expect(listing.body.endpoints).toEqual([
      {
        id: 'we_cfg_backend',
        url: receiver.url,
        events: null,
        description: 'from config',
        createdAt: expect.any(String),
        source: 'config',
      },
    ]);
    expect(listing.text).not.toContain(SECRET);
    for (const [method, path, words] of [
      ['DELETE', '/v1/event-endpoints/we_cfg_backend', "change the workers' configuration"],
      [
        'POST',
        '/v1/event-endpoints/we_cfg_backend/rotate-secret',
        "its secret is in the workers' configuration",
      ],
    ] as const) {
      const res = await call(method, path);
      expect([path, res.status, res.body.error.code]).toEqual([path, 409, 'invalid_state']);
      expect(res.body.error.message).toBe(`we_cfg_backend is configured (PAYSAGA_EVENT_ENDPOINTS): ${words}`);
    }
    // The secret never entered the store (nor Temporal) nor the worker's logs.
    const row = await store.db
      .selectFrom('event_endpoints')
      .selectAll()
      .where('id', '=', 'we_cfg_backend')
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(SECRET);
    expect(row).toMatchObject({ url: receiver.url, source: 'config' });
    expect(workers[0]!.output()).not.toContain(SECRET);
    expect(workers[0]!.output()).toContain('we_cfg_backend');
  });

  test('SIGKILL while a delivery is in flight: the next worker delivers everything once per id, in order', async () => {
    const subject = newSubject();
    const events = [1, 2, 3, 4].map((n) =>
      sessionEvent(
        subject,
        n,
        (['session.created', 'session.awaiting_payer', 'session.succeeded', 'session.refunded'] as const)[
          n - 1
        ]!,
      ),
    );
    let held = false;
    receiver.setAnswer((e) => {
      if (e.sequence === 2 && !held) {
        held = true;
        return 'hang'; // the worker is killed while it waits for this answer
      }
      return 200;
    });
    const first = workers[0]!;
    await publisher.publish(taskQueue, events);
    await receiver.until(() => held, 'the second event is in flight');
    await kill(first);
    receiver.setAnswer(() => 200);

    // While no worker runs, more events are published: their activity waits in Temporal for a worker.
    const later = [5, 6].map((n) => sessionEvent(subject, n, 'session.chargeback'));
    const publishing = publisher.publish(taskQueue, later);
    await spawn(
      JSON.stringify([{ url: receiver.url, secret: SECRET, id: 'backend', description: 'from config' }]),
    );
    await publishing;
    await receiver.until(
      (r) => (acceptedBySubject(r).get(subject)?.length ?? 0) >= 6,
      'every event after the restart',
      90_000,
    );

    expect(acceptedBySubject(receiver).get(subject)).toEqual([1, 2, 3, 4, 5, 6]);
    const ours = receiver.deliveries.filter((d) => d.event.session_id === subject);
    for (const d of ours) {
      expect(verifyPaysagaEvent(d.raw, d.signature, [SECRET]).id).toBe(d.event.id);
      expect(d.event).toEqual([...events, ...later].find((e) => e.id === d.event.id));
    }
    // The only repeat is the request the dead worker never heard answered; same id, same event.
    const second = ours.filter((d) => d.event.sequence === 2);
    expect(second.map((d) => d.answered)).toEqual(['hang', 200]);
    expect(second[1]!.event).toEqual(second[0]!.event);
    expect(ours).toHaveLength(7);

    const deliveries = await call('GET', `/v1/events/${events[1]!.id}/deliveries`);
    const d = deliveries.body.deliveries[0];
    expect(d).toMatchObject({ endpointId: 'we_cfg_backend', status: 'delivered', attemptCount: 2 });
    expect(d.attempts[0].error).toBe('no outcome heard: the worker sending it stopped');
    expect(d.attempts[1].status).toBe(200);
  }, 180_000);

  test('a worker with PAYSAGA_EVENT_ENDPOINTS=[] removes the configured endpoints', async () => {
    await spawn('[]');
    const listing = await call('GET', '/v1/event-endpoints');
    expect(listing.body.endpoints).toEqual([]);
  });
});
