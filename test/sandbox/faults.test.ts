/*
 * Fault injection over HTTP: the faults plugin registered in a fastify app whose /api/v1 route counts
 * what it processed, so "processed or not" is observable without the rest of the sandbox.
 * (faults-sandbox.test.ts runs the same faults against the full sandbox.)
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { FaultInjector, type FaultRuleInput } from '../../sandbox/faults';
import faultsPlugin from '../../sandbox/routes/faults';
import { WebhookDispatcher } from '../../sandbox/webhooks';
import { generateTestKeyPair } from '../helpers/keys';

jest.setTimeout(20_000);

let app: FastifyInstance;
let base: string;
let processed = 0;
const faults = new FaultInjector();

beforeAll(async () => {
  app = Fastify({ logger: false });
  await app.register(faultsPlugin, { faults });
  app.post('/api/v1/transaction/approve', async () => ({ status: 'ok', processed: ++processed }));
  app.post('/api/v1/transaction/start/checkout', async () => ({ status: 'ok', processed: ++processed }));
  app.get('/sandbox/health', async () => ({ status: 'ok' }));
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app.close();
});
beforeEach(() => {
  faults.clear();
});

async function call(path: string, body: unknown = {}) {
  const started = Date.now();
  try {
    const res = await request(`${base}${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    const text = await res.body.text();
    return {
      status: res.statusCode,
      text,
      ms: Date.now() - started,
      error: null as null | { code: string; message: string },
    };
  } catch (err) {
    const e = err as { code?: string; message: string };
    return {
      status: null,
      text: '',
      ms: Date.now() - started,
      error: { code: String(e.code), message: e.message },
    };
  }
}
async function setRules(rules: unknown) {
  const res = await request(`${base}/sandbox/faults`, {
    method: 'POST',
    body: JSON.stringify({ rules }),
    headers: { 'content-type': 'application/json' },
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

describe('rule evaluation', () => {
  test('rate is applied by counting, deterministically: 0.5 fires on every 2nd matching call', () => {
    const f = new FaultInjector([{ kind: 'error_5xx', rate: 0.5 }]);
    const fired = Array.from(
      { length: 6 },
      () => f.decideRequest('/api/v1/transaction/approve').errorStatus !== undefined,
    );
    expect(fired).toEqual([false, true, false, true, false, true]);
    const third = new FaultInjector([{ kind: 'webhook_drop', rate: 1 / 3 }]);
    expect(Array.from({ length: 6 }, () => third.decideWebhook('x').drop)).toEqual([
      false,
      false,
      true,
      false,
      false,
      true,
    ]);
  });

  test('times spends a rule; path filters exactly or by prefix; later rules of a kind take over', () => {
    const f = new FaultInjector([
      { kind: 'error_5xx', status: 502, path: 'transaction/start/*', times: 1 },
      { kind: 'error_5xx', status: 500, path: 'transaction/approve', times: 2 },
    ]);
    expect(f.decideRequest('/api/v1/transaction/cancel').errorStatus).toBeUndefined();
    expect(f.decideRequest('/api/v1/transaction/start/checkout?x=1').errorStatus).toBe(502);
    expect(f.decideRequest('/api/v1/transaction/start/transfer').errorStatus).toBeUndefined();
    expect([1, 2, 3].map(() => f.decideRequest('transaction/approve').errorStatus)).toEqual([
      500,
      500,
      undefined,
    ]);
    expect(f.list().map((r) => r.remaining)).toEqual([0, 0]);
  });
});

describe('time windows (forMs) and appended rules', () => {
  test('a rule with forMs acts only within its window, counted from when it was set, then shows expired', () => {
    let now = 1_000_000;
    const f = new FaultInjector([{ kind: 'error_5xx', forMs: 60_000, label: 'outage' }], () => now);
    expect(f.decideRequest('transaction/approve').errorStatus).toBe(503);
    now += 59_999;
    expect(f.decideRequest('transaction/approve').errorStatus).toBe(503);
    now += 1;
    expect(f.decideRequest('transaction/approve').errorStatus).toBeUndefined();
    expect(f.list()).toEqual([
      {
        kind: 'error_5xx',
        status: 503,
        rate: 1,
        forMs: 60_000,
        label: 'outage',
        remaining: null,
        matched: 2, // a call after the window does not count as matched
        fired: 2,
        setAt: new Date(1_000_000).toISOString(),
        expiresAt: new Date(1_060_000).toISOString(),
        expired: true,
      },
    ]);
  });

  test('addRules appends: the rules held keep their counters and windows, each new one counts from now', () => {
    let now = 0;
    const f = new FaultInjector([{ kind: 'webhook_drop', forMs: 10_000 }], () => now);
    expect(f.decideWebhook('checkout_results').drop).toBe(true);
    now = 5_000;
    f.addRules([{ kind: 'webhook_duplicate', forMs: 10_000 }]);
    expect(f.decideWebhook('checkout_results')).toMatchObject({ drop: true }); // a drop consults nothing else
    now = 10_000; // the drop's window is over, the duplicate's is not
    expect(f.decideWebhook('checkout_results')).toMatchObject({ drop: false, duplicate: true });
    now = 15_000;
    expect(f.decideWebhook('checkout_results')).toMatchObject({ drop: false, duplicate: false });
    expect(f.list().map((r) => [r.kind, r.fired, r.expired])).toEqual([
      ['webhook_drop', 2, true],
      ['webhook_duplicate', 1, true],
    ]);
  });

  test('at most MAX_RULES_HELD rules are held: an add beyond it is refused whole', () => {
    const f = new FaultInjector(Array.from({ length: 100 }, () => ({ kind: 'latency', ms: 1 })));
    for (let i = 0; i < 8; i++) f.addRules(Array.from({ length: 100 }, () => ({ kind: 'latency', ms: 1 })));
    expect(f.list()).toHaveLength(900);
    expect(() => f.addRules(Array.from({ length: 101 }, () => ({ kind: 'latency', ms: 1 })))).toThrow(
      new Error('invalid fault rules: faults.: Too big: expected array to have <=100 items'),
    );
    expect(() => f.addRules(Array.from({ length: 100 }, () => ({ kind: 'latency', ms: 1 })))).not.toThrow();
    expect(() => f.addRules([{ kind: 'latency', ms: 1 }])).toThrow(
      new Error('invalid fault rules: at most 1000 rules are held; 1000 are'),
    );
    expect(f.list()).toHaveLength(1_000);
  });
});

describe('request faults over HTTP', () => {
  test('latency: the answer comes at least ms later; other paths are not slowed', async () => {
    await setRules([{ kind: 'latency', ms: 2_000, path: 'transaction/approve' }]);
    const slow = await call('/api/v1/transaction/approve');
    const fast = await call('/api/v1/transaction/start/checkout');
    expect(slow.status).toBe(200);
    expect(slow.ms).toBeGreaterThanOrEqual(1_995);
    // not slowed: a second below the latency, room enough for a slow machine
    expect(fast.status).toBe(200);
    expect(fast.ms).toBeLessThan(1_000);
  });

  test('error_5xx: answered without processing; times limits it', async () => {
    await setRules([{ kind: 'error_5xx', status: 502, times: 2 }]);
    const before = processed;
    const answers = [
      await call('/api/v1/transaction/approve'),
      await call('/api/v1/transaction/approve'),
      await call('/api/v1/transaction/approve'),
    ];
    expect(answers.map((a) => a.status)).toEqual([502, 502, 200]);
    expect(processed).toBe(before + 1);
  });

  test('drop_after_commit: processed, then the connection closes without an answer', async () => {
    await setRules([{ kind: 'drop_after_commit', path: 'transaction/approve', times: 1 }]);
    const before = processed;
    const dropped = await call('/api/v1/transaction/approve');
    expect(dropped.status).toBeNull();
    // Which of the two a dropped socket gives depends on when the client hears it.
    expect(['UND_ERR_SOCKET', 'ECONNRESET']).toContain(dropped.error!.code);
    expect(processed).toBe(before + 1); // the state changed although the client saw an error
    const next = await call('/api/v1/transaction/approve');
    expect(next.status).toBe(200);
    expect(JSON.parse(next.text)).toEqual({ status: 'ok', processed: before + 2 });
  });

  test('faults act only on /api/v1: the sandbox control routes stay reachable', async () => {
    await setRules([{ kind: 'error_5xx' }, { kind: 'latency', ms: 2_000 }]);
    const started = Date.now();
    const res = await request(`${base}/sandbox/health`);
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(Date.now() - started).toBeLessThan(1_000); // a second below the latency
    const api = await call('/api/v1/transaction/approve');
    expect(api.status).toBe(503); // default status
    expect(api.ms).toBeGreaterThanOrEqual(1_995); // the rules were in force
  });
});

describe('/sandbox/faults', () => {
  test('POST replaces, GET shows remaining counts, DELETE clears', async () => {
    const rules: FaultRuleInput[] = [
      { kind: 'error_5xx', times: 2, path: 'transaction/approve' },
      { kind: 'webhook_delay', ms: 10 },
    ];
    const set = await setRules(rules);
    expect(set.status).toBe(200);
    expect(set.body.rules).toEqual([
      {
        kind: 'error_5xx',
        status: 503,
        path: 'transaction/approve',
        times: 2,
        rate: 1,
        remaining: 2,
        matched: 0,
        fired: 0,
      },
      { kind: 'webhook_delay', ms: 10, rate: 1, remaining: null, matched: 0, fired: 0 },
    ]);
    await call('/api/v1/transaction/approve');
    const shown = (await (await request(`${base}/sandbox/faults`)).body.json()) as {
      rules: Array<{ remaining: number | null }>;
    };
    expect(shown.rules.map((r) => r.remaining)).toEqual([1, null]);

    await setRules([{ kind: 'latency', ms: 1 }]);
    expect(faults.list().map((r) => r.kind)).toEqual(['latency']);

    const del = await request(`${base}/sandbox/faults`, { method: 'DELETE' });
    expect(await del.body.json()).toEqual({ rules: [] });
    expect(faults.list()).toEqual([]);
  });

  test('POST /sandbox/faults/add appends to the rules held; a bad body is 400 naming the field, nothing added', async () => {
    await setRules([{ kind: 'error_5xx', path: 'transaction/approve', times: 1 }]);
    expect((await call('/api/v1/transaction/approve')).status).toBe(503);
    const add = async (body: unknown) => {
      const res = await request(`${base}/sandbox/faults/add`, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    };
    const added = await add({
      rules: [{ kind: 'error_5xx', status: 502, path: 'transaction/start/*', forMs: 60_000, label: 'w1' }],
    });
    expect(added.status).toBe(200);
    expect(added.body.rules).toEqual([
      expect.objectContaining({ kind: 'error_5xx', status: 503, remaining: 0, fired: 1 }),
      expect.objectContaining({ status: 502, forMs: 60_000, label: 'w1', expired: false, fired: 0 }),
    ]);
    expect((await call('/api/v1/transaction/start/checkout')).status).toBe(502);
    expect((await call('/api/v1/transaction/approve')).status).toBe(200);

    const bad = await add({ rules: [{ kind: 'latency', ms: 1, forMs: 0 }] });
    expect(bad.status).toBe(400);
    expect((bad.body.error as { error_description: string }).error_description).toBe(
      'rules.0.forMs.positive',
    );
    expect(faults.list()).toHaveLength(2);
  });

  test.each([
    [{ rules: [{ kind: 'latency' }] }, 'rules.0.ms.not_null'],
    [{ rules: [{ kind: 'latency', ms: 1, forMs: 86_400_001 }] }, 'rules.0.forMs.max_86400000'],
    [{ rules: [{ kind: 'latency', ms: 1, label: '' }] }, 'rules.0.label.not_blank'],
    [{ rules: [{ kind: 'latency', ms: -5 }] }, 'rules.0.ms.min_0'],
    [{ rules: [{ kind: 'error_5xx', status: 404 }] }, 'rules.0.status.invalid_value'],
    [{ rules: [{ kind: 'error_5xx', rate: 1.5 }] }, 'rules.0.rate.max_1'],
    [{ rules: [{ kind: 'drop_after_commit', times: 0 }] }, 'rules.0.times.positive'],
    [{ rules: [{ kind: 'webhook_drop' }, { kind: 'explode' }] }, 'rules.1.kind.invalid_value'],
    [{ rules: [{ kind: 'latency', ms: 1, path: '../etc' }] }, 'rules.0.path.invalid_format'],
    [{ rules: [{ kind: 'latency', ms: 1, colour: 'red' }] }, 'rules.0.colour.unknown_field'],
    [{}, 'rules.not_null'],
  ])('bad rules %j: 400 naming %s, rules unchanged', async (body, description) => {
    faults.setRules([{ kind: 'latency', ms: 1 }]);
    const res = await request(`${base}/sandbox/faults`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    const answer = (await res.body.json()) as {
      status: string;
      error: { error_code: string; error_description: string };
    };
    expect(answer.status).toBe('error');
    expect(answer.error.error_code).toBe('invalid_request');
    expect(answer.error.error_description).toBe(description);
    expect(faults.list().map((r) => r.kind)).toEqual(['latency']);
  });
});

describe('/sandbox/webhooks', () => {
  test('lists the deliveries of the dispatcher built with this injector, optionally by session', async () => {
    const service = generateTestKeyPair();
    const dispatcher = new WebhookDispatcher({ serviceKey: service.privateKey, timeScale: 0.001, faults });
    try {
      dispatcher.enqueue(
        { projectId: 'p', url: 'http://127.0.0.1:1/x', enabled: false },
        { type: 'approve_pending', session_info: { id: 'ps_a' } },
      );
      dispatcher.enqueue(
        { projectId: 'p', url: 'http://127.0.0.1:1/x', enabled: false },
        { type: 'approve_pending', session_info: { id: 'ps_b' } },
      );
      const all = (await (await request(`${base}/sandbox/webhooks`)).body.json()) as {
        deliveries: Array<{ sessionId: string; state: string }>;
      };
      expect(all.deliveries.map((r) => r.sessionId)).toEqual(['ps_a', 'ps_b']);
      const one = (await (await request(`${base}/sandbox/webhooks?session_id=ps_b`)).body.json()) as {
        deliveries: Array<{ sessionId: string; state: string }>;
      };
      expect(one.deliveries).toEqual([expect.objectContaining({ sessionId: 'ps_b', state: 'not_sent' })]);
    } finally {
      await dispatcher.close();
    }
  });
});
