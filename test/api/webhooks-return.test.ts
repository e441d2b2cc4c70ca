/**
 * The provider's webhooks through the API (signature over the raw bytes, status = what happened to the
 * event) and the payer's return page by GET and by POST.
 */
import { sign, generateKeyPairSync } from 'node:crypto';
import { request } from 'undici';
import { buildApi } from '../../api/app';
import { completeThreeDs } from '../helpers/payer';
import { apiDepsFor, card, finished, FRICTIONLESS, ref, rub, THREE_DS, useApiStack } from './api-stack';
import { finalView } from '../helpers/final';

jest.setTimeout(60_000);

const s = useApiStack();

async function checkout(pan: string, extra: Record<string, unknown> = {}) {
  const res = await s.call('POST', '/v1/checkouts?wait=15000', {
    body: {
      method: 'card',
      reference: ref('wh'),
      amount: rub(1_500),
      card: card(pan),
      customer: { user_id: 'u1' },
      ...extra,
    },
  });
  expect(res.status).toBe(201);
  return res.body;
}

async function signalsOf(sessionId: string): Promise<number> {
  const history = await s.stack.temporal.workflow.getHandle(sessionId).fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes).length;
}

function postWebhook(raw: string, signature?: string) {
  return request(`${s.url}/webhooks/provider`, {
    method: 'POST',
    body: raw,
    headers: {
      'content-type': 'application/json',
      ...(signature !== undefined ? { 'x-signature': signature } : {}),
    },
  }).then(async (r) => ({
    status: r.statusCode,
    body: (await r.body.json()) as { error?: { code: string; retryable: boolean }; outcome?: string },
  }));
}

const serviceSign = (raw: string) =>
  sign('sha256', Buffer.from(raw), s.stack.sandbox.keys.service.privateKey).toString('base64');

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await request(`${s.url}/metrics`)).body.text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('POST /webhooks/provider', () => {
  it("the sandbox's webhooks reach the workflows through the API (counted as signaled)", async () => {
    const before = await metric('paysaga_webhooks_received_total', 'outcome="signaled"');
    // Manual approval keeps the workflow running until the sandbox's approve_pending webhook has had
    // time to arrive (with auto approval the run may end before any webhook reaches it).
    const started = await checkout(FRICTIONLESS, {
      settings: { approval: { mode: 'manual', deadlineMs: 30_000 } },
    });
    const deadline = Date.now() + 20_000;
    const signaled = () => metric('paysaga_webhooks_received_total', 'outcome="signaled"');
    while ((await signaled()) === before && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(await signaled()).toBeGreaterThan(before);
    expect(await signalsOf(started.sessionId)).toBeGreaterThan(0);
    await s.call('POST', `/v1/sessions/${started.sessionId}/approve`);
    expect((await finished(s, started.sessionId)).phase).toBe('succeeded');
  });

  it('a bad signature is 401 and nothing is signaled; a missing one too', async () => {
    const started = await checkout(FRICTIONLESS, {
      settings: { approval: { mode: 'manual', deadlineMs: 30_000 } },
    });
    expect(started.phase).toBe('awaiting_approval');
    const signals = await signalsOf(started.sessionId);
    const raw = JSON.stringify({ type: 'checkout_results', session_info: started.lastSnapshot });
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = await postWebhook(raw, sign('sha256', Buffer.from(raw), stranger).toString('base64'));
    expect(forged.status).toBe(401);
    expect(forged.body.error?.code).toBe('unauthorized');
    // signed bytes, then one byte changed
    const tampered = await postWebhook(
      raw.replace('"type":"checkout_results"', '"type":"checkout_resultz"'),
      serviceSign(raw),
    );
    expect(tampered.status).toBe(401);
    expect((await postWebhook(raw)).status).toBe(401);
    expect(await signalsOf(started.sessionId)).toBe(signals);
    await s.call('POST', `/v1/sessions/${started.sessionId}/cancel`);
  });

  it('a valid event for a running session is signaled: 200', async () => {
    const started = await checkout(FRICTIONLESS, {
      settings: { approval: { mode: 'manual', deadlineMs: 30_000 } },
    });
    const signals = await signalsOf(started.sessionId);
    const raw = JSON.stringify({ type: 'approve_pending', session_info: started.lastSnapshot });
    const res = await postWebhook(raw, serviceSign(raw));
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('signaled');
    expect(await signalsOf(started.sessionId)).toBe(signals + 1);
    await s.call('POST', `/v1/sessions/${started.sessionId}/cancel`);
  });

  it('a valid event for a session with no workflow is 503 (the provider delivers it again)', async () => {
    const raw = JSON.stringify({
      type: 'checkout_results',
      session_info: { id: 'ps_987654321', transaction_status: 'completed' },
    });
    const before = await metric('paysaga_webhooks_received_total', 'outcome="unknown_session"');
    const res = await postWebhook(raw, serviceSign(raw));
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'unknown_session', retryable: true });
    expect(await metric('paysaga_webhooks_received_total', 'outcome="unknown_session"')).toBe(before + 1);
  });

  it('a signed body that is not an event is 400', async () => {
    const raw = JSON.stringify({ hello: 'world' });
    expect((await postWebhook(raw, serviceSign(raw))).status).toBe(400);
  });
});

describe('payer return', () => {
  const backUrl = () => `${s.url}/return`;

  async function threeDs(code: string) {
    const started = await checkout(THREE_DS, { backUrl: backUrl() });
    expect(started.phase).toBe('awaiting_payer');
    const back = await completeThreeDs(started.userAction, code);
    return { sessionId: started.sessionId as string, back };
  }

  function fieldsOf(html: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const m of html.matchAll(/<input[^>]*>/gi)) {
      const name = /name="([^"]*)"/i.exec(m[0])?.[1];
      if (name) out[name] = /value="([^"]*)"/i.exec(m[0])?.[1] ?? '';
    }
    return out;
  }

  it('POST (the form the 3-DS page auto-posts): success page with the session id', async () => {
    const { sessionId, back } = await threeDs('12345');
    const fields = fieldsOf(back.html);
    expect(fields.session_id).toBe(sessionId);
    const res = await request(backUrl(), {
      method: 'POST',
      body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const html = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(html).toContain('data-outcome="success"');
    expect(html).toContain(sessionId);
    expect(html.includes(THREE_DS) || html.includes(THREE_DS.slice(-4) + '<')).toBe(false);
    expect((await finished(s, sessionId)).phase).toBe('succeeded');
  });

  it('GET /return/{session_id}: success page', async () => {
    const { sessionId } = await threeDs('12345');
    const res = await request(`${s.url}/return/${sessionId}`);
    const html = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(html).toContain('data-outcome="success"');
  });

  it('GET with a failed 3-DS code: failed page; JSON POST to /return/{id} works too', async () => {
    const { sessionId } = await threeDs('00000');
    const res = await request(`${s.url}/return?session_id=${sessionId}`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('data-outcome="failed"');
    const json = await request(`${s.url}/return/${sessionId}`, {
      method: 'POST',
      body: '{"PaRes":"x"',
      headers: { 'content-type': 'application/json' },
    });
    expect(json.statusCode).toBe(200);
    expect(await json.body.text()).toContain('data-outcome="failed"');
  });

  it('a payer who comes back after the session ended sees its outcome, not "not found"', async () => {
    const { sessionId } = await threeDs('12345');
    await finalView(s.stack.temporal, sessionId);
    const res = await request(`${s.url}/return/${sessionId}`, {
      method: 'POST',
      body: 'PaRes=late',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('data-outcome="success"');
  });

  it('an unknown session: 404 page, by GET and by POST', async () => {
    const get = await request(`${s.url}/return/ps_999999996`);
    expect(get.statusCode).toBe(404);
    expect(await get.body.text()).toContain('data-outcome="not_found"');
    const post = await request(`${s.url}/return`, {
      method: 'POST',
      body: 'session_id=ps_999999996',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(post.statusCode).toBe(404);
    await post.body.dump();
    const none = await request(`${s.url}/return`);
    expect(none.statusCode).toBe(404);
    await none.body.dump();
  });

  it('with a partner return URL: 303 to it with ?session_id=', async () => {
    const other = buildApi({
      ...apiDepsFor(s.stack),
      apiTokens: ['x'],
      returnUrl: 'https://shop.example/thanks?from=pay',
    });
    const url = await other.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { sessionId } = await threeDs('12345');
      const res = await request(`${url}/return/${sessionId}`, {
        method: 'POST',
        body: '',
        headers: { 'content-type': 'text/plain' },
      });
      await res.body.dump();
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe(`https://shop.example/thanks?from=pay&session_id=${sessionId}`);
    } finally {
      await other.close();
    }
  });
});
