/**
 * A backend hears every change, end to end: a backend (a local HTTP receiver) registers itself through the API
 * (`POST /v1/event-endpoints` over HTTP), then every session kind of `paysaga demo` runs through the
 * HTTP API (card checkout, 3-D Secure with the payer's return, payment form, hold + partial finalize,
 * FPS payment, FPS binding, payout, recurring, identity check, a refund, a chargeback) and a
 * subscription over several short periods, with `paysaga worker` as a real process and the sandbox over
 * HTTP (webhooks on). Midway the receiver answers 500 for a while (long enough for several retries of
 * one event) and, during that outage, the worker is SIGKILLed and a new one started.
 *
 * At the end every subject's events (as `GET /v1/events` lists them) were each accepted once, with
 * sequence 1, 2, 3, ... in order of acceptance, every expected type arrived, every delivery (refused
 * ones too) verifies with `verifyPaysagaEvent` and with an HMAC computed here from api/README.md's
 * algorithm, and no body holds a card number or CVV.
 *
 * The kill happens while the receiver refuses everything, so no attempt the dead worker did not hear
 * answered was accepted: the at-least-once repeat of such an attempt (test/events/worker-process.test.ts)
 * cannot show up here as a second acceptance.
 */
import { TEST_CARD } from '../../sandbox/test-cards';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { request } from 'undici';
import { buildApi, type PaysagaApi } from '../../api/app';
import { DEMO_KINDS, runDemo, type DemoKind, type DemoResult } from '../../cli/dev/demo';
import { PaysagaApiClient, verifyPaysagaEvent } from '../../client/http';
import { PaymentsClient } from '../../client/payments-client';
import { DeferredReturnUrls, ReturnUrls } from '../../client/return-url';
import { EncryptionCodec, generateCodecKeySpec, parseCodecKeys } from '../../platform/codec';
import type { EventType, PaysagaEvent } from '../../common/events';
import { DEFAULT_SETTINGS, mergeSettings } from '../../common/settings';
import { createWebhookVerifier, ProviderClient } from '../../provider';
import { listenLocally, newReturnSecret } from '../api/api-stack';
import { startEventReceiver, type EventReceiver } from '../helpers/events';
import { startRecordingServer } from '../helpers/recording-server';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { connectTestClient, uniqueTaskQueue, type TestClient } from '../helpers/temporal';
import { testStore, type TestStore } from '../helpers/store';
import { signingKeysFromEnv } from '../../platform/event-secrets';
import { spawnWorkerProcess, type WorkerProcess } from '../helpers/worker-process';
import { testOutboundPolicy } from '../helpers/outbound';

const TOKEN = 'acceptance-token';
/** Every test card (the demo uses some): none may appear in any delivered body. */
const CARD_NUMBERS = Object.values(TEST_CARD);
const CARD_KEYS = new Set(['card_number', 'card_code', 'cvv', 'cvc', 'pan']);
const SUBSCRIPTION_PERIODS = 3;
/** Per scenario: an activity that died with the worker waits out its startToCloseTimeout (45 s). */
const SCENARIO_TIMEOUT_MS = 240_000;

/**
 * Fast polling, a short follow (a refund or chargeback after it reopens the session, whose events go on
 * counting), and deadlines no SIGKILL can reach.
 */
const SETTINGS = mergeSettings(DEFAULT_SETTINGS, {
  polling: { lateAfterMs: 2_000, initialMs: 250, maxMs: 1_000, factor: 1.5 },
  deadlines: { payerActionMs: 300_000, sessionMs: 600_000, startMs: 300_000 },
  followMs: 5_000,
  recheckMs: 60_000,
});

/**
 * What each kind's session announces (workflows/session.ts): `session.created` when it starts, then one
 * event per phase it enters other than starting/processing (phaseOf in common/, phaseChanged), and
 * `session.refunded` / `session.chargeback` per completed moneyback (announceMoneyback). A phase is
 * certain to be seen when the provider waits in it for paysaga or for the payer, who acts only once
 * paysaga shows it; these are `required`, in this order:
 *
 * - The sandbox project approves nothing by itself (`autoApprove: false`): every payment and payout
 *   waits at next_step approve until paysaga approves (awaiting_approval); an identity check has no
 *   approval.
 * - Card payments hold first (`hold: true`, as `paysaga dev`'s project): they wait at next_step
 *   finalize until paysaga finalizes (awaiting_finalization; auto at once, `hold` by hand).
 * - 3-D Secure waits for the payer (awaiting_payer, whose userAction the demo follows); FPS payments
 *   and bindings show a QR (awaiting_payer) until the bank app pays.
 * - The refund and the chargeback come after the result (the demo waits for each on the session).
 * - The subscription: created, one `subscription.charged` per period, canceled by the demo.
 */
const CARD: EventType[] = [
  'session.created',
  'session.awaiting_approval',
  'session.awaiting_finalization',
  'session.succeeded',
];
const QR: EventType[] = [
  'session.created',
  'session.awaiting_approval',
  'session.awaiting_payer',
  'session.succeeded',
];
const EXPECTED: Record<DemoKind | 'charge', { required: EventType[] }> = {
  card: { required: CARD },
  'three-ds': {
    required: [
      'session.created',
      'session.awaiting_approval',
      'session.awaiting_payer',
      'session.awaiting_finalization',
      'session.succeeded',
    ],
  },
  'payment-form': { required: CARD },
  fps: { required: QR },
  'fps-widget': { required: QR },
  hold: { required: CARD },
  refund: { required: [...CARD, 'session.refunded'] },
  payout: { required: ['session.created', 'session.awaiting_approval', 'session.succeeded'] },
  /** Three payouts one at a time (the second canceled by the partner): each decision and result named. */
  payouts: {
    required: [
      'session.created',
      'session.awaiting_approval',
      'session.payout_succeeded',
      'session.awaiting_approval',
      'session.payout_canceled',
      'session.awaiting_approval',
      'session.payout_succeeded',
      'session.succeeded',
    ],
  },
  'identity-check': { required: ['session.created', 'session.succeeded'] },
  chargeback: { required: [...CARD, 'session.chargeback'] },
  'fps-binding': { required: QR },
  recurring: { required: CARD },
  /**
   * Created, one charged per period the demo waited for, canceled; a charge in flight when the demo
   * cancels finishes (api/README.md), so one more `subscription.charged` may follow the cancel.
   */
  subscription: {
    required: [
      'subscription.created',
      ...Array<EventType>(SUBSCRIPTION_PERIODS).fill('subscription.charged'),
      'subscription.canceled',
    ],
  },
  /** Each period's charge of the subscription: a recurring payment session of its own. */
  charge: { required: CARD },
};
/**
 * Phases a session may pass through without waiting on paysaga: announced only when a state paysaga
 * reads shows them (a payment form has no operation, so no user action, until the payer uses it).
 */
const OPTIONAL_ALWAYS: EventType[] = ['session.awaiting_payer'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

/** api/README.md "Verifying events", steps 1-4, written here without the client's helper. */
function verifiesByHand(raw: string, header: string, secret: string, nowSec: number): boolean {
  const parts = header.split(',').map((p) => p.trim());
  const t = parts.find((p) => p.startsWith('t='))?.slice(2);
  const v1 = parts.filter((p) => p.startsWith('v1=')).map((p) => p.slice(3));
  if (!t || !/^\d+$/.test(t) || v1.length === 0) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${raw}`, 'utf8').digest('hex'));
  const matches = v1.some((sig) => {
    const given = Buffer.from(sig);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches && Math.abs(nowSec - Number(t)) <= 300;
}

/** Keys anywhere in a JSON value. */
function keysOf(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keysOf(v, out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      keysOf(v, out);
    }
  return out;
}

const subjectOf = (e: PaysagaEvent) => e.session_id ?? e.subscription_id ?? '';

describe('every session kind and a subscription reach a backend through a 500 outage and a worker SIGKILL', () => {
  const codecKeys = generateCodecKeySpec('acc');
  const dataConverter = { payloadCodecs: [new EncryptionCodec(parseCodecKeys(codecKeys))] };
  const taskQueue = uniqueTaskQueue('events-acceptance');
  let sandbox: TestSandbox;
  let store: TestStore;
  let relay: Awaited<ReturnType<typeof startRecordingServer>>;
  let temporal: TestClient;
  let provider: ProviderClient;
  let receiver: EventReceiver;
  let api: PaysagaApi;
  let client: PaysagaApiClient;
  let v1Url: string;
  const workers: WorkerProcess[] = [];
  /** Where the sandbox's webhooks go once the API listens (the relay holds them with 503 until then). */
  let webhookTarget: string | undefined;

  const spawn = async () => {
    const w = spawnWorkerProcess(sandbox, taskQueue, {
      ...store.env,
      PAYSAGA_CODEC_KEYS: codecKeys,
      PAYSAGA_EVENT_TIMEOUT_MS: '10000',
      PAYSAGA_EVENT_RETRY_INITIAL_MS: '200',
      PAYSAGA_EVENT_RETRY_MAX_MS: '1000',
      PAYSAGA_EVENT_RETRY_FOR_MS: '600000',
      // As in production: the reconciler finds what every webhook failed to tell (the sandbox's clock
      // runs a hundred times faster, so it gives up redelivering a webhook after 18 s of real time).
      PAYSAGA_RECONCILE_EVERY_MS: '5000',
      PAYSAGA_RECONCILE_WINDOW_MS: '3600000',
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

  beforeAll(async () => {
    relay = await startRecordingServer((req, res) => {
      if (!webhookTarget) return void res.writeHead(503).end();
      const signature = req.headers['x-signature'];
      request(webhookTarget, {
        method: 'POST',
        body: req.body,
        headers: {
          'content-type': 'application/json',
          ...(typeof signature === 'string' ? { 'x-signature': signature } : {}),
        },
      }).then(
        async (r) => {
          await r.body.dump();
          res.writeHead(r.statusCode).end();
        },
        () => res.writeHead(502).end(),
      );
    });
    // The project of `paysaga dev`: card payments hold first; webhooks on. Sandbox time runs 100 times
    // faster (its steps), so the QR and 3-D Secure lifetimes are set to minutes of real time: a payer
    // slowed down by a loaded machine or the SIGKILL must not see them expire.
    sandbox = await startTestSandbox({
      projects: [{ hold: true }],
      webhookUrl: `${relay.url}/webhooks`,
      qrTtlSeconds: 30_000,
      config: { threeDsTtlSeconds: 30_000 },
    });
    store = await testStore();
    temporal = await connectTestClient({ dataConverter });
    provider = new ProviderClient({
      baseUrl: sandbox.url,
      projectId: sandbox.projectId,
      privateKey: sandbox.keys.partner.privateKey,
    });
    receiver = await startEventReceiver();
    const returnSecrets = [newReturnSecret()];
    const returnUrls = new DeferredReturnUrls();
    api = buildApi({
      store,
      // As the workers do (no PAYSAGA_EVENT_SIGNING_KEY): endpoint secrets derive from the codec keys.
      events: {
        signingKeys: signingKeysFromEnv({ PAYSAGA_CODEC_KEYS: codecKeys }),
        outbound: testOutboundPolicy(),
      },
      payments: new PaymentsClient({
        store,
        temporal: temporal.client,
        provider,
        taskQueue,
        settings: SETTINGS,
        returnUrls,
        // The sandbox is the provider's test environment: the demo's subscription bills every few seconds.
        providerEnvironment: 'test',
      }),
      provider,
      temporal: temporal.client,
      taskQueue,
      settings: SETTINGS,
      verifyWebhook: createWebhookVerifier([sandbox.keys.service.publicPem]),
      apiTokens: [TOKEN],
      returnSecrets,
      temporalUiUrl: 'http://temporal-ui.invalid',
    });
    const urls = await listenLocally(api);
    returnUrls.resolve(new ReturnUrls(urls.publicUrl, returnSecrets));
    webhookTarget = `${urls.publicUrl}/webhooks/provider`;
    v1Url = urls.v1Url;
    client = new PaysagaApiClient({ baseUrl: v1Url, token: TOKEN });
    await spawn();
  }, 120_000);

  afterAll(async () => {
    for (const w of workers) await kill(w).catch(() => undefined);
    await client?.close();
    await api?.close();
    await receiver?.close();
    await provider?.close();
    await temporal?.close();
    await sandbox?.close();
    await store?.close();
    await relay?.close();
  });

  test('every expected event arrives once per id, in order per session, each verifying; no card data', async () => {
    // The backend registers itself over HTTP; the secret is shown once, in this answer.
    const registered = await request(`${v1Url}/v1/event-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, description: 'acceptance backend' }),
    });
    const endpoint = (await registered.body.json()) as { id: string; secret: string; events: unknown };
    expect(registered.statusCode).toBe(201);
    expect(endpoint).toMatchObject({ id: expect.any(String), url: receiver.url, events: null });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const secret = endpoint.secret;

    let outage = false;
    receiver.setAnswer(() => (outage ? 500 : 200));
    const refusedPerId = () => {
      const n = new Map<string, number>();
      for (const d of receiver.deliveries)
        if (d.answered === 500) n.set(d.event.id, (n.get(d.event.id) ?? 0) + 1);
      return n;
    };

    const log: string[] = [];
    const demo = runDemo({
      api: client,
      sandboxUrl: sandbox.url,
      temporalUiUrl: 'http://temporal-ui.invalid',
      namespace: 'default',
      timeoutMs: SCENARIO_TIMEOUT_MS,
      subscriptionPeriods: SUBSCRIPTION_PERIODS,
      progress: (kind, message) => log.push(`${kind}: ${message}`),
    });

    // Midway: the receiver refuses everything until one event has been refused several times, the
    // worker is SIGKILLed during that outage and a new one started, which retries too; then it accepts.
    await receiver.until((r) => r.accepted().length >= 10, 'the first events before the outage', 120_000);
    outage = true;
    const outageFrom = Date.now();
    await receiver.until(
      () => Math.max(0, ...refusedPerId().values()) >= 3,
      'one event refused three times',
      60_000,
    );
    const first = workers[0]!;
    await kill(first);
    const killedAt = receiver.deliveries.length;
    const sessionsAtKill = new Set(receiver.deliveries.map((d) => subjectOf(d.event))).size;
    await spawn();
    await receiver.until(
      (r) => r.deliveries.slice(killedAt).filter((d) => d.answered === 500).length >= 3,
      'the new worker retries during the outage',
      90_000,
    );
    // Nobody's payment waits for the backend: a checkout made while it refuses everything succeeds.
    let paidDuringOutage = await client.checkouts.create({
      method: 'card',
      reference: `during-outage-${Date.now()}`,
      customer: { user_id: 'outage' },
      amount: { amount: 1_500, currency: 'RUB' },
      card: { card_number: TEST_CARD.visa, card_exp_month: '12', card_exp_year: '30', card_code: '123' },
    });
    while (!paidDuringOutage.final && Date.now() - outageFrom < 150_000)
      paidDuringOutage = await client.sessions.waitForChange(paidDuringOutage.sessionId, {
        after: paidDuringOutage.version,
        waitMs: 10_000,
      });
    expect(paidDuringOutage.phase).toBe('succeeded');
    outage = false;
    const outageTo = Date.now();
    const refused = refusedPerId();

    const results: DemoResult[] = await within(demo, SCENARIO_TIMEOUT_MS + 60_000, 'the demo');
    const notOk = results.filter((r) => !r.ok);
    if (notOk.length) throw new Error(`scenarios failed: ${JSON.stringify(notOk)}\n${log.join('\n')}`);
    expect(results.map((r) => r.kind).sort()).toEqual([...DEMO_KINDS].sort());

    // The subjects: each scenario's session (the subscription's id for it) and each period's charge.
    const kindOf = new Map<string, DemoKind | 'charge'>();
    for (const r of results) kindOf.set(r.sessionId!, r.kind);
    const subscriptionId = results.find((r) => r.kind === 'subscription')!.sessionId!;
    // Once no charge is in flight (one may be when the demo cancels: it finishes).
    let sub = await client.subscriptions.get(subscriptionId);
    for (const until = Date.now() + 120_000; sub.charges.some((c) => c.outcome === 'pending');) {
      if (Date.now() > until) throw new Error(`a charge still pending: ${JSON.stringify(sub.charges)}`);
      await sleep(500);
      sub = await client.subscriptions.get(subscriptionId);
    }
    const charges = sub.charges.filter((c) => c.sessionId).map((c) => c.sessionId!);
    expect(charges.length).toBeGreaterThanOrEqual(SUBSCRIPTION_PERIODS);
    for (const c of charges) kindOf.set(c, 'charge');

    // paysaga's own record of each subject's events (the outbox), once it has everything.
    const listed = new Map<string, PaysagaEvent[]>();
    const listAll = async (subject: string) => {
      const events: PaysagaEvent[] = [];
      let after: string | undefined;
      for (;;) {
        const key = subject.startsWith('ps_') ? 'session_id' : 'subscription_id';
        const page = await client.events.list({ [key]: subject, limit: 200, ...(after ? { after } : {}) });
        events.push(...(page.events as PaysagaEvent[]));
        if (!page.hasMore || !page.next) return events;
        after = page.next;
      }
    };
    const acceptedOf = (subject: string) => receiver.accepted().filter((d) => subjectOf(d.event) === subject);
    const deadline = Date.now() + 120_000;
    for (const subject of kindOf.keys()) {
      for (;;) {
        const events = await listAll(subject);
        listed.set(subject, events);
        const final = events.some((e) =>
          /^session\.(succeeded|failed|canceled)$|^subscription\.canceled$/.test(e.type),
        );
        const need = new Set(events.map((e) => e.id));
        const got = new Set(acceptedOf(subject).map((d) => d.event.id));
        if (final && [...need].every((id) => got.has(id)) && got.size === need.size) break;
        if (Date.now() > deadline)
          throw new Error(
            `${kindOf.get(subject)} ${subject}: listed ${[...need].join(' ')}; accepted ${[...got].join(' ')}`,
          );
        await sleep(500);
      }
    }
    // Moneybacks after the result (refund, chargeback) come with the session's later run.
    for (const [subject, kind] of kindOf) {
      const last = EXPECTED[kind].required.at(-1)!;
      for (;;) {
        if (acceptedOf(subject).some((d) => d.event.type === last)) break;
        if (Date.now() > deadline) break;
        await sleep(500);
        listed.set(subject, await listAll(subject));
      }
    }

    const summary = [...kindOf].map(
      ([subject, kind]) =>
        `${kind} ${subject}: ${acceptedOf(subject)
          .map((d) => `${d.event.type}#${d.event.sequence}`)
          .join(', ')}`,
    );
    process.stderr.write(
      `[acceptance] ${receiver.deliveries.length} deliveries, ${receiver.accepted().length} accepted, ` +
        `${[...refused.values()].reduce((a, b) => a + b, 0)} refused (at most ${Math.max(...refused.values())} for one id); ` +
        `${sessionsAtKill} subjects had events when the worker was killed\n${summary.join('\n')}\n`,
    );

    for (const [subject, kind] of kindOf) {
      const accepted = acceptedOf(subject);
      const events = listed.get(subject)!;
      // Each id accepted once; sequence 1, 2, 3, ... in order of acceptance; exactly what paysaga lists.
      expect([kind, accepted.map((d) => d.event.sequence)]).toEqual([kind, events.map((_, i) => i + 1)]);
      expect([kind, accepted.map((d) => d.event.id)]).toEqual([kind, events.map((e) => e.id)]);
      for (const d of accepted) expect(d.event).toEqual(events.find((e) => e.id === d.event.id));
      // The expected types, in order; nothing else but an awaiting_payer paysaga happened to read.
      const types = accepted.map((d) => d.event.type);
      const { required } = EXPECTED[kind];
      // A subscription may leave the period that fell due as the demo canceled owed (a charge in dunning
      // or not yet started is owed at a cancel: docs/billing.md).
      const optional: EventType[] = kind === 'subscription' ? ['subscription.period_owed'] : OPTIONAL_ALWAYS;
      const allowed = new Set([...required, ...optional]);
      expect([kind, types.filter((t) => !allowed.has(t))]).toEqual([kind, []]);
      const seen = types.filter((t) => required.includes(t));
      if (kind === 'subscription') {
        // The charge that finished after the cancel, if there was one, comes last.
        const extra = sub.totals.succeeded - SUBSCRIPTION_PERIODS;
        expect(extra === 0 || extra === 1).toBe(true);
        expect(seen).toEqual([...required, ...Array<EventType>(extra).fill('subscription.charged')]);
      } else expect([kind, seen]).toEqual([kind, required]);
    }
    // Each charge that succeeded was announced on the subscription, and each has its session's events.
    const charged = listed.get(subscriptionId)!.filter((e) => e.type === 'subscription.charged');
    expect(charged).toHaveLength(sub.totals.succeeded);
    expect(sub.charges.filter((c) => c.outcome === 'succeeded').map((c) => kindOf.get(c.sessionId!))).toEqual(
      Array(sub.totals.succeeded).fill('charge'),
    );

    // The checkout made during the outage announced its result then, and the backend has it now.
    const outageEvents = await listAll(paidDuringOutage.sessionId);
    const result = outageEvents.find((e) => e.type === 'session.succeeded');
    expect(Date.parse(result!.created)).toBeLessThan(outageTo);

    // Every delivery, refused or not, to the end: the headers, the signature both ways, no card data.
    const now = Math.floor(Date.now() / 1000);
    for (const d of receiver.deliveries) {
      expect(d.contentType).toMatch(/^application\/json/);
      expect(d.eventIdHeader).toBe(d.event.id);
      expect(verifyPaysagaEvent(d.raw, d.signature, [secret], 600, now).id).toBe(d.event.id);
      expect([d.event.id, verifiesByHand(d.raw, d.signature, secret, now)]).toEqual([d.event.id, true]);
      for (const pan of CARD_NUMBERS) expect(d.raw).not.toContain(pan);
      expect([...keysOf(JSON.parse(d.raw))].filter((k) => CARD_KEYS.has(k))).toEqual([]);
    }
    // The outage shows in the delivery log of an event refused the most: its 500s, then the 2xx.
    const [mostRefused] = [...refused].sort((a, b) => b[1] - a[1])[0]!;
    const log2 = await client.events.deliveries(mostRefused);
    const ours = log2.deliveries.find((x) => x.endpointId === endpoint.id)!;
    expect(ours.status).toBe('delivered');
    const statuses = ours.attempts.map((a) => a.status ?? 'none');
    expect(statuses.filter((s) => s === 500).length).toBeGreaterThanOrEqual(2);
    expect(statuses.at(-1)).toBe(200);
    // And nothing a worker logged holds a card number.
    for (const w of workers) for (const pan of CARD_NUMBERS) expect(w.output()).not.toContain(pan);
  }, 600_000);
});
