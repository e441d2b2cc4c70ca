/*
 * The sandbox's webhook dispatcher, black-box at the receiving end: a real HTTP receiver on 127.0.0.1
 * records what arrives and when, and real RSA keys sign and verify.
 * Retry timing runs with a small timeScale, so "30 minutes" lasts a few seconds.
 */
import { verify } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { generateTestKeyPair, type TestKeyPair } from '../helpers/keys';
import { json, startRecordingServer, type RecordedRequest } from '../helpers/recording-server';
import { FaultInjector, type FaultRuleInput } from '../../sandbox/faults';
import { WebhookDispatcher, type WebhookTarget } from '../../sandbox/webhooks';
import { GIVE_UP_AFTER_MS, MAX_PAUSE_MS, nextPauseMs, RETRY_PAUSES_MS } from '../../sandbox/webhook-schedule';

jest.setTimeout(20_000);

interface Arrival {
  atMs: number;
  req: RecordedRequest;
}

/** A receiver whose answer is chosen per arrival (1-based); it remembers when each request arrived. */
async function startSink(answer: (n: number, res: ServerResponse) => void = (_n, res) => json(res, 200, {})) {
  const arrivals: Arrival[] = [];
  let decide = answer;
  const server = await startRecordingServer((req, res) => {
    arrivals.push({ atMs: Date.now(), req });
    decide(arrivals.length, res);
  });
  return {
    ...server,
    arrivals,
    answerWith(a: typeof answer) {
      decide = a;
    },
    bodies: () =>
      arrivals.map(
        (a) =>
          JSON.parse(a.req.body.toString('utf8')) as {
            type: string;
            session_info: { id: string; n?: number };
          },
      ),
  };
}
type Sink = Awaited<ReturnType<typeof startSink>>;

async function waitFor(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let service: TestKeyPair;
const open: Array<{ close(): Promise<void> }> = [];

beforeAll(() => {
  service = generateTestKeyPair();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

function dispatcher(timeScale: number, rules: FaultRuleInput[] = []) {
  const faults = new FaultInjector(rules);
  const d = new WebhookDispatcher({ serviceKey: service.privateKey, timeScale, faults });
  open.push(d);
  return { d, faults };
}
async function sink(answer?: (n: number, res: ServerResponse) => void): Promise<Sink> {
  const s = await startSink(answer);
  open.push(s);
  return s;
}
const target = (s: { url: string }, enabled = true): WebhookTarget => ({
  projectId: 'proj_1',
  url: `${s.url}/webhooks`,
  enabled,
});
const session = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  transaction_status: 'active',
  ...extra,
});

describe('signed delivery', () => {
  test('body is {type, session_info}; X-Signature verifies with the service public key over the raw bytes', async () => {
    const s = await sink();
    const { d } = dispatcher(1);
    const info = session('ps_sig', { amount: 'кириллица ✓', nested: { a: [1, 2] } });
    d.enqueue(target(s), { type: 'approve_pending', session_info: info });
    await waitFor(() => s.arrivals.length === 1);

    const { req } = s.arrivals[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/webhooks');
    expect(req.headers['content-type']).toBe('application/json');
    const signature = String(req.headers['x-signature']);
    expect(verify('sha256', req.body, service.publicKey, Buffer.from(signature, 'base64'))).toBe(true);
    // Any change to the bytes breaks it: the signature covers exactly what was sent.
    const tampered = Buffer.concat([req.body, Buffer.from(' ')]);
    expect(verify('sha256', tampered, service.publicKey, Buffer.from(signature, 'base64'))).toBe(false);
    expect(JSON.parse(req.body.toString('utf8'))).toEqual({ type: 'approve_pending', session_info: info });

    await waitFor(() => d.deliveries().length === 1);
    expect(d.deliveries()[0]).toMatchObject({
      type: 'approve_pending',
      sessionId: 'ps_sig',
      projectId: 'proj_1',
      attempt: 1,
      httpStatus: 200,
      state: 'delivered',
    });
  });

  test('any 2xx counts as delivered (one attempt); session_info is sent as it was at enqueue', async () => {
    const s = await sink((_n, res) => {
      res.writeHead(204);
      res.end();
    });
    const { d } = dispatcher(0.001);
    const info = session('ps_204');
    d.enqueue(target(s), { type: 'checkout_results', session_info: info });
    await waitFor(() => d.deliveries().length === 1);
    await sleep(100); // a retry would come after 5 ms here
    expect(s.arrivals).toHaveLength(1);
    expect(d.deliveries()[0]).toMatchObject({ httpStatus: 204, state: 'delivered' });
  });

  test('webhooks disabled for the project: nothing is sent, the event is recorded as not_sent', async () => {
    const s = await sink();
    const { d } = dispatcher(0.001);
    d.enqueue(target(s, false), { type: 'approve_pending', session_info: session('ps_off') });
    await sleep(200);
    expect(s.arrivals).toHaveLength(0);
    expect(d.deliveries()).toEqual([
      expect.objectContaining({ sessionId: 'ps_off', attempt: 0, state: 'not_sent' }),
    ]);
  });

  test('enqueue never throws, even for an unserializable body or a bad URL', async () => {
    const { d } = dispatcher(0.001);
    const cyclic: Record<string, unknown> = { id: 'ps_cyc' };
    cyclic.self = cyclic;
    expect(() =>
      d.enqueue(
        { projectId: 'p', url: 'http://127.0.0.1:1/x', enabled: true },
        { type: 't', session_info: cyclic },
      ),
    ).not.toThrow();
    expect(() =>
      d.enqueue(
        { projectId: 'p', url: 'not a url', enabled: true },
        { type: 't', session_info: session('ps_url') },
      ),
    ).not.toThrow();
    await waitFor(() => d.deliveries({ sessionId: 'ps_url' }).length >= 1);
    expect(d.deliveries({ sessionId: 'ps_url' })[0]!.state).toBe('retrying');
  });
});

describe('redelivery', () => {
  test('the documented schedule: attempts at 0, 5 s, 20 s, 50 s, 1:50, 3:50, 8:50, 18:50, 30:00, then give up', () => {
    const starts = [0];
    for (let failed = 1; ; failed++) {
      const pause = nextPauseMs(failed, starts.at(-1)!, 1); // answers take no time here
      if (pause === null) break;
      expect(pause).toBeLessThanOrEqual(MAX_PAUSE_MS);
      starts.push(starts.at(-1)! + pause);
    }
    expect(starts.map((ms) => ms / 1000)).toEqual([0, 5, 20, 50, 110, 230, 530, 1130, 1800]);
    // scaled, and with slow answers the last attempt still lands on the deadline
    expect(nextPauseMs(8, 1_700, 0.001)).toBe(100);
    expect(nextPauseMs(9, 1_800, 0.001)).toBeNull();
  });

  test('4xx/5xx answers are retried with growing pauses that never exceed 15 minutes (scaled), then delivered', async () => {
    const scale = 0.01; // planned pauses 50, 150, 300, 600, 1200 ms
    const failures = [500, 503, 404, 429, 502];
    const s = await sink((n, res) => json(res, failures[n - 1] ?? 200, {}));
    const { d } = dispatcher(scale);
    d.enqueue(target(s), { type: 'approve_pending', session_info: session('ps_retry') });
    await waitFor(() => s.arrivals.length === failures.length + 1, 15_000);
    await sleep(100);
    expect(s.arrivals).toHaveLength(failures.length + 1);

    // Timers never fire early, but a loaded machine can make any of them late: so every gap is checked
    // against its planned pause from below only, and growth is checked with a margin no stall reaches.
    const planned = RETRY_PAUSES_MS.slice(0, failures.length).map((ms) => ms * scale);
    for (let i = 1; i < planned.length; i++) expect(planned[i]!).toBeGreaterThanOrEqual(2 * planned[i - 1]!);
    const gaps = s.arrivals.slice(1).map((a, i) => a.atMs - s.arrivals[i]!.atMs);
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(planned[i]! - 5);
      expect(gap).toBeLessThanOrEqual(MAX_PAUSE_MS * scale);
    });
    // growing: the last pause must be waited out (checked above), the first must not. Constant or
    // shrinking pauses make the first gap at least the last planned pause (1200 ms); here it is 50 ms
    // and would need a stall of over a second to get there.
    expect(gaps[0]!).toBeLessThan(planned.at(-1)!);

    const records = d.deliveries({ sessionId: 'ps_retry' });
    expect(records.map((r) => r.state)).toEqual([
      'retrying',
      'retrying',
      'retrying',
      'retrying',
      'retrying',
      'delivered',
    ]);
    expect(records.map((r) => r.httpStatus)).toEqual([...failures, 200]);
    expect(records.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    // every attempt carries the same signed bytes
    expect(new Set(s.arrivals.map((a) => a.req.body.toString('base64'))).size).toBe(1);
    expect(new Set(s.arrivals.map((a) => a.req.headers['x-signature'])).size).toBe(1);
  });

  test('no success within 30 minutes (scaled): given up for good, no pause over 15 minutes, no attempt after', async () => {
    // 30 min = 9 s, 15 min = 4.5 s. This scale leaves about a second for a late timer in every bound below,
    // and a last pause that is not shortened to the deadline (attempt 9 at 33 m 50 s = 10.15 s) still fails.
    const scale = 0.005;
    const s = await sink((_n, res) => json(res, 500, {}));
    const { d } = dispatcher(scale);
    d.enqueue(target(s), { type: 'checkout_results', session_info: session('ps_giveup') });
    await waitFor(() => d.deliveries().some((r) => r.state === 'given_up'), 20_000);
    const countAtGiveUp = s.arrivals.length;
    await sleep(MAX_PAUSE_MS * scale + 300); // longer than any pause: a further attempt would show up
    expect(s.arrivals).toHaveLength(countAtGiveUp);

    // 0, 5 s, 20 s, 50 s, 1 m 50, 3 m 50, 8 m 50, 18 m 50, 30 m
    expect(countAtGiveUp).toBe(9);
    const first = s.arrivals[0]!.atMs;
    const last = s.arrivals[countAtGiveUp - 1]!.atMs;
    expect(last - first).toBeLessThanOrEqual(GIVE_UP_AFTER_MS * scale + 1_000);
    expect(last - first).toBeGreaterThanOrEqual(GIVE_UP_AFTER_MS * scale - 20);
    const gaps = s.arrivals.slice(1).map((a, i) => a.atMs - s.arrivals[i]!.atMs);
    // the longest planned pause is the last one, 11 m 10 s (3.35 s): over a second below this bound
    for (const gap of gaps) expect(gap).toBeLessThanOrEqual(MAX_PAUSE_MS * scale);

    const states = d.deliveries().map((r) => r.state);
    expect(states.slice(0, -1).every((st) => st === 'retrying')).toBe(true);
    expect(states.at(-1)).toBe('given_up');
  }, 40_000);

  test('a connection error and an attempt without answer are failures and are retried', async () => {
    const scale = 0.001; // per-attempt timeout: max(250 ms, 10 s x scale) = 250 ms
    const s = await sink((n, res) => {
      if (n === 1) return; // never answer the first attempt
      json(res, 200, {});
    });
    const { d } = dispatcher(scale);
    d.enqueue(target(s), { type: 'approve_pending', session_info: session('ps_hang') });
    d.enqueue(
      { projectId: 'p', url: 'http://127.0.0.1:1/nothing-listens', enabled: true },
      { type: 'approve_pending', session_info: session('ps_refused') },
    );
    await waitFor(() => d.deliveries({ sessionId: 'ps_hang' }).some((r) => r.state === 'delivered'));
    const hang = d.deliveries({ sessionId: 'ps_hang' });
    expect(hang[0]).toMatchObject({ attempt: 1, httpStatus: null, state: 'retrying' });
    expect(hang[0]!.error).toBe('no answer within 250 ms');
    expect(hang[0]!.durationMs).toBeGreaterThanOrEqual(240);
    expect(hang[1]).toMatchObject({ attempt: 2, httpStatus: 200, state: 'delivered' });
    const refused = d.deliveries({ sessionId: 'ps_refused' });
    expect(refused[0]).toMatchObject({ httpStatus: null, state: 'retrying' });
    expect(refused[0]!.error).toBe('Error: connect ECONNREFUSED 127.0.0.1:1');
  });

  test('events are delivered independently: a later event is not held up by an earlier one being retried', async () => {
    const s = await sink();
    // The first attempt of approve_pending is answered 500 only once checkout_results has arrived, so the
    // order below does not depend on how fast anything runs: a dispatcher that held checkout_results back
    // until approve_pending was delivered (or had an outcome) would instead see that attempt time out
    // and retried before checkout_results.
    let failFirst: (() => void) | null = null;
    s.answerWith((n, res) => {
      const { type } = s.bodies()[n - 1]!;
      if (n === 1 && type === 'approve_pending') {
        failFirst = () => json(res, 500, {});
        return;
      }
      json(res, 200, {});
      if (type === 'checkout_results') failFirst?.();
    });
    const { d } = dispatcher(0.2); // per-attempt timeout 2 s, first retry 1 s after the 500
    d.enqueue(target(s), { type: 'approve_pending', session_info: session('ps_ind', { n: 1 }) });
    await waitFor(() => s.arrivals.length === 1);
    d.enqueue(target(s), { type: 'checkout_results', session_info: session('ps_ind', { n: 2 }) });
    await waitFor(() => s.arrivals.length === 3, 10_000);
    expect(s.bodies().map((b) => b.type)).toEqual(['approve_pending', 'checkout_results', 'approve_pending']);
    await waitFor(() => d.deliveries().filter((r) => r.state === 'delivered').length === 2);
    expect(
      d
        .deliveries({ sessionId: 'ps_ind' })
        .filter((r) => r.type === 'approve_pending')
        .map((r) => [r.attempt, r.httpStatus, r.state]),
    ).toEqual([
      [1, 500, 'retrying'],
      [2, 200, 'delivered'],
    ]);
  });

  test('close() stops pending retries: nothing is sent afterwards', async () => {
    const s = await sink((_n, res) => json(res, 500, {}));
    const faults = new FaultInjector();
    const d = new WebhookDispatcher({ serviceKey: service.privateKey, timeScale: 0.01, faults });
    d.enqueue(target(s), { type: 'approve_pending', session_info: session('ps_close') });
    await waitFor(() => s.arrivals.length === 1);
    await d.close();
    await sleep(300); // retries would be at 50 ms, 200 ms
    expect(s.arrivals).toHaveLength(1);
    d.enqueue(target(s), { type: 'approve_pending', session_info: session('ps_close2') });
    await sleep(50);
    expect(s.arrivals).toHaveLength(1);
  });
});

describe('webhook faults', () => {
  test('webhook_drop: the event is never sent and is recorded as dropped; eventType and times limit it', async () => {
    const s = await sink();
    const { d, faults } = dispatcher(0.001, [
      { kind: 'webhook_drop', eventType: 'approve_pending', times: 1 },
    ]);
    d.enqueue(target(s), { type: 'approve_pending', session_info: session('ps_drop', { n: 1 }) });
    d.enqueue(target(s), { type: 'checkout_results', session_info: session('ps_drop', { n: 2 }) });
    d.enqueue(target(s), { type: 'approve_pending', session_info: session('ps_drop', { n: 3 }) });
    await waitFor(() => s.arrivals.length === 2);
    await sleep(100);
    expect(
      s
        .bodies()
        .map((b) => b.session_info.n)
        .sort(),
    ).toEqual([2, 3]);
    expect(d.deliveries().filter((r) => r.state === 'dropped')).toEqual([
      expect.objectContaining({ type: 'approve_pending', attempt: 0 }),
    ]);
    expect(faults.list()[0]).toMatchObject({ kind: 'webhook_drop', remaining: 0, fired: 1 });
  });

  test('webhook_duplicate: the same signed event arrives twice', async () => {
    const s = await sink();
    const { d } = dispatcher(0.001, [{ kind: 'webhook_duplicate', times: 1 }]);
    d.enqueue(target(s), { type: 'checkout_results', session_info: session('ps_dup', { n: 1 }) });
    await waitFor(() => s.arrivals.length === 2);
    d.enqueue(target(s), { type: 'checkout_results', session_info: session('ps_dup', { n: 2 }) });
    await waitFor(() => s.arrivals.length === 3);
    await sleep(100);
    expect(s.arrivals).toHaveLength(3);
    expect(s.arrivals[0]!.req.body.equals(s.arrivals[1]!.req.body)).toBe(true);
    expect(s.arrivals[0]!.req.headers['x-signature']).toBe(s.arrivals[1]!.req.headers['x-signature']);
    const delivered = d.deliveries().filter((r) => r.state === 'delivered');
    expect(delivered.map((r) => r.copy).sort()).toEqual([0, 0, 1]);
  });

  test('webhook_reorder: an event is held back and arrives after the next event of its session', async () => {
    const s = await sink();
    const { d } = dispatcher(1, [{ kind: 'webhook_reorder', eventType: 'approve_pending', times: 1 }]);
    d.enqueue(target(s), { type: 'approve_pending', session_info: session('ps_ro') });
    d.enqueue(target(s), { type: 'approve_pending', session_info: session('ps_other') }); // spent: goes straight out
    await waitFor(() => s.arrivals.length === 1);
    await sleep(150);
    expect(s.bodies().map((b) => b.session_info.id)).toEqual(['ps_other']); // ps_ro is held
    d.enqueue(target(s), { type: 'checkout_results', session_info: session('ps_ro') });
    await waitFor(() => s.arrivals.length === 3);
    expect(
      s
        .bodies()
        .slice(1)
        .map((b) => b.type),
    ).toEqual(['checkout_results', 'approve_pending']);
  });

  test('webhook_reorder without a later event: released after maxHoldMs', async () => {
    const s = await sink();
    const { d } = dispatcher(1, [{ kind: 'webhook_reorder', maxHoldMs: 300 }]);
    const t0 = Date.now();
    d.enqueue(target(s), { type: 'action_pending', session_info: session('ps_lonely') });
    await waitFor(() => s.arrivals.length === 1);
    expect(s.arrivals[0]!.atMs - t0).toBeGreaterThanOrEqual(295);
  });

  test('webhook_delay: the first attempt waits the given ms; other event types are not delayed', async () => {
    const s = await sink();
    const { d } = dispatcher(1, [{ kind: 'webhook_delay', ms: 2_000, eventType: 'checkout_results' }]);
    const t0 = Date.now();
    d.enqueue(target(s), { type: 'checkout_results', session_info: session('ps_late') });
    d.enqueue(target(s), { type: 'approve_pending', session_info: session('ps_soon') });
    await waitFor(() => s.arrivals.length === 2);
    const bySession = new Map(
      s.arrivals.map((a) => [JSON.parse(a.req.body.toString()).session_info.id as string, a.atMs - t0]),
    );
    // not delayed: it arrives long before the delay ends (a second of room for a slow machine)
    expect(bySession.get('ps_soon')!).toBeLessThan(1_000);
    expect(bySession.get('ps_late')!).toBeGreaterThanOrEqual(1_995);
  });
});
