/**
 * The provider's webhooks through the API's public listener (signature over the raw bytes, status = what
 * happened to the event) and the payer's return page, bound to its session by the token in back_url
 * (docs/decisions/014-two-listeners.md): by GET and by POST, nothing in Temporal for a forged, unsigned or
 * foreign id, and one state check per interval however often a valid one is hit.
 */
import { sign, generateKeyPairSync } from 'node:crypto';
import { request } from 'undici';
import { buildApi } from '../../api/app';
import { returnToken, verifyReturnToken } from '../../platform/return-token';
import { finalView } from '../helpers/final';
import { completeThreeDs, PageNotServedError } from '../helpers/payer';
import {
  apiDepsFor,
  card,
  finished,
  FRICTIONLESS,
  listenLocally,
  newReturnSecret,
  ref,
  rub,
  THREE_DS,
  useApiStack,
} from './api-stack';

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

async function historyOf(sessionId: string) {
  return (await s.stack.temporal.workflow.getHandle(sessionId).fetchHistory()).events ?? [];
}

async function signalsOf(sessionId: string, name?: string): Promise<number> {
  return (await historyOf(sessionId)).filter(
    (e) =>
      e.workflowExecutionSignaledEventAttributes &&
      (name === undefined || e.workflowExecutionSignaledEventAttributes.signalName === name),
  ).length;
}

function postWebhook(raw: string, signature?: string, contentType = 'application/json') {
  return request(`${s.publicUrl}/webhooks/provider`, {
    method: 'POST',
    body: raw,
    headers: {
      'content-type': contentType,
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
    // A signal that comes while a workflow task runs is written to the history when the task ends; the
    // sandbox's own webhooks may add more. Bounded.
    let now = await signalsOf(started.sessionId);
    for (const until = Date.now() + 15_000; now < signals + 1 && Date.now() < until;)
      now = await new Promise((r) => setTimeout(r, 200)).then(() => signalsOf(started.sessionId));
    expect(now).toBeGreaterThanOrEqual(signals + 1);
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

  it('the signature decides, not the Content-Type: a malformed one is read as none, never a 415', async () => {
    const raw = JSON.stringify({
      type: 'checkout_results',
      session_info: { id: 'ps_987654322', transaction_status: 'completed' },
    });
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = sign('sha256', Buffer.from(raw), stranger).toString('base64');
    // schemathesis sent `sR-`; `/` and an empty value are no media type either.
    for (const contentType of ['sR-', '/', '', 'text/plain']) {
      const signed = await postWebhook(raw, serviceSign(raw), contentType);
      expect({ contentType, status: signed.status, code: signed.body.error?.code }).toEqual({
        contentType,
        status: 503,
        code: 'unknown_session',
      });
      expect({ contentType, status: (await postWebhook(raw, forged, contentType)).status }).toEqual({
        contentType,
        status: 401,
      });
    }
  });

  it('a signed body that is not an event is 400', async () => {
    const raw = JSON.stringify({ hello: 'world' });
    expect((await postWebhook(raw, serviceSign(raw))).status).toBe(400);
  });

  it('a signed event whose session id is not ps_<digits> is 400 and reaches no workflow', async () => {
    // Ids of paysaga's own workflows, and things that are not ids at all.
    for (const id of ['ref-order-1', 'sub-order-1', 'reconciler-paysaga', 'ps_12/../x', 'ps_']) {
      const raw = JSON.stringify({
        type: 'checkout_results',
        session_info: { id, transaction_status: 'completed' },
      });
      const res = await postWebhook(raw, serviceSign(raw));
      expect([id, res.status, res.body.error?.retryable]).toEqual([id, 400, false]);
    }
  });
});

describe('payer return', () => {
  const returnUrlOf = (sessionId: string, secret = s.returnSecrets[0]!) =>
    `${s.publicUrl}/return/${sessionId}?t=${returnToken(secret, sessionId)}`;
  /** The return page of `sessionId` with a token one of the API's secrets minted (it carries its expiry). */
  const isReturnUrlOf = (url: string, sessionId: string) => {
    const u = new URL(url);
    return (
      `${u.origin}${u.pathname}` === `${s.publicUrl}/return/${sessionId}` &&
      verifyReturnToken(s.returnSecrets, sessionId, u.searchParams.get('t'))
    );
  };

  async function threeDs(code: string) {
    // No backUrl: the API gives the provider the session's signed return page.
    const started = await checkout(THREE_DS);
    expect(started.phase).toBe('awaiting_payer');
    const back = await completeThreeDs(started.userAction, code);
    return { sessionId: started.sessionId as string, back };
  }

  function formOf(html: string): { action: string; fields: Record<string, string> } {
    const fields: Record<string, string> = {};
    for (const m of html.matchAll(/<input[^>]*>/gi)) {
      const name = /name="([^"]*)"/i.exec(m[0])?.[1];
      if (name) fields[name] = /value="([^"]*)"/i.exec(m[0])?.[1] ?? '';
    }
    const action = (/<form[^>]*action="([^"]*)"/i.exec(html)?.[1] ?? '').replace(/&amp;/g, '&');
    return { action, fields };
  }

  const postForm = (url: string, fields: Record<string, string>) =>
    request(url, {
      method: 'POST',
      body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

  it('a 3-D Secure checkout returns through the signed back_url, to which the sandbox adds nothing', async () => {
    const { sessionId, back } = await threeDs('12345');
    const started = await s.call('GET', `/v1/sessions/${sessionId}`);
    // Sent with start/checkout (it needs the session id): the provider holds exactly paysaga's URL.
    const backUrl: string = started.body.lastSnapshot.payments[0].payment_settings.back_url;
    expect(isReturnUrlOf(backUrl, sessionId)).toBe(true);
    const form = formOf(back.html);
    expect(form.action).toBe(backUrl);
    expect(Object.keys(form.fields).sort()).toEqual(['MD', 'PaRes']);
    const res = await postForm(form.action, form.fields);
    const html = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(html).toContain('data-outcome="success"');
    expect(html).toContain(sessionId);
    expect(html.includes(THREE_DS) || html.includes(THREE_DS.slice(-4) + '<')).toBe(false);
    expect((await finished(s, sessionId)).phase).toBe('succeeded');
  });

  it('GET of the signed URL: the result page; a failed 3-DS code shows failed, also to a JSON POST', async () => {
    const ok = await threeDs('12345');
    await finished(s, ok.sessionId);
    const get = await request(returnUrlOf(ok.sessionId));
    expect(get.statusCode).toBe(200);
    expect(await get.body.text()).toContain('data-outcome="success"');

    const { sessionId } = await threeDs('00000');
    const res = await request(returnUrlOf(sessionId));
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('data-outcome="failed"');
    const json = await request(returnUrlOf(sessionId), {
      method: 'POST',
      body: '{"PaRes":"x"',
      headers: { 'content-type': 'application/json' },
    });
    expect(json.statusCode).toBe(200);
    expect(await json.body.text()).toContain('data-outcome="failed"');
    for (const contentType of ['sR-', '/', '']) {
      const odd = await request(returnUrlOf(sessionId), {
        method: 'POST',
        body: 'PaRes=x',
        headers: { 'content-type': contentType },
      });
      expect({ contentType, status: odd.statusCode }).toEqual({ contentType, status: 200 });
      expect(await odd.body.text()).toContain('data-outcome="failed"');
    }
  });

  it('a payer who comes back after the session ended sees its outcome, not "not found"', async () => {
    const { sessionId } = await threeDs('12345');
    await finalView(s.stack.temporal, sessionId);
    const res = await postForm(returnUrlOf(sessionId), { PaRes: 'late' });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('data-outcome="success"');
  });

  it('a forged, unsigned or foreign return id is a 404 and changes nothing in Temporal', async () => {
    // A running session: waiting for the partner's approval, so nothing else writes its history.
    const target = await checkout(FRICTIONLESS, {
      settings: { approval: { mode: 'manual', deadlineMs: 60_000 } },
    });
    expect(target.phase).toBe('awaiting_approval');
    const other = await checkout(FRICTIONLESS, {
      settings: { approval: { mode: 'manual', deadlineMs: 60_000 } },
    });
    const id = target.sessionId as string;
    // Its history is still until a decision: the start's answer and the approve_pending webhook are in.
    const deadline = Date.now() + 20_000;
    while ((await s.payments.sessions.get(id)).phase !== 'awaiting_approval' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const before = (await historyOf(id)).length;
    const reads = {
      signal: jest.spyOn(s.payments.sessions, 'notifyPayerReturned'),
      query: jest.spyOn(s.payments.sessions, 'get'),
      update: jest.spyOn(s.payments.sessions, 'waitForChange'),
    };
    try {
      const secret = s.returnSecrets[0]!;
      const attempts: [string, string][] = [
        ['unsigned', `/return/${id}`],
        ['empty token', `/return/${id}?t=`],
        ['forged token', `/return/${id}?t=${'A'.repeat(43)}`],
        ['another session', `/return/${id}?t=${returnToken(secret, other.sessionId)}`],
        ['another secret', `/return/${id}?t=${returnToken(newReturnSecret(), id)}`],
        ['two tokens', `/return/${id}?t=${returnToken(secret, id)}&t=x`],
        ['not a payment session', `/return/sub-${id}?t=${returnToken(secret, `sub-${id}`)}`],
        ['the bare /return of old', `/return?session_id=${id}`],
      ];
      for (const [why, path] of attempts) {
        for (const method of ['GET', 'POST'] as const) {
          const res = await request(`${s.publicUrl}${path}`, {
            method,
            ...(method === 'POST'
              ? { body: `session_id=${id}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }
              : {}),
          });
          const text = await res.body.text();
          expect([why, method, res.statusCode]).toEqual([why, method, 404]);
          expect(text).not.toContain(id);
        }
      }
      for (const spy of Object.values(reads)) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of Object.values(reads)) spy.mockRestore();
    }
    expect((await historyOf(id)).length).toBe(before);
    await s.call('POST', `/v1/sessions/${id}/cancel`);
    await s.call('POST', `/v1/sessions/${other.sessionId}/cancel`);
  });

  it('a flood of valid returns makes at most one state check per interval (5 s), and no Update', async () => {
    const started = await checkout(THREE_DS); // awaiting the payer: the workflow runs throughout
    expect(started.phase).toBe('awaiting_payer');
    const id = started.sessionId as string;
    const update = jest.spyOn(s.payments.sessions, 'waitForChange');
    const t0 = Date.now();
    const statuses: number[] = [];
    try {
      // 200 requests, 20 at a time, GET and POST alike.
      for (let batch = 0; batch < 10; batch++) {
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_v, i) =>
            (i % 2 === 0 ? request(returnUrlOf(id)) : postForm(returnUrlOf(id), { PaRes: 'x' })).then(
              async (r) => {
                await r.body.dump();
                return r.statusCode;
              },
            ),
          ),
        );
        statuses.push(...answers);
      }
      expect(update).not.toHaveBeenCalled();
    } finally {
      update.mockRestore();
    }
    const elapsed = Date.now() - t0;
    expect(statuses).toHaveLength(200);
    expect(statuses.every((c) => c === 200)).toBe(true);
    const allowed = Math.floor(elapsed / 5_000) + 1;
    const signaled = await signalsOf(id, 'payerReturned');
    expect(signaled).toBeGreaterThanOrEqual(1);
    expect(signaled).toBeLessThanOrEqual(allowed);
    // Ends the session, unless a slow machine let its payer deadline close the 3-D Secure page first.
    await completeThreeDs(started.userAction, '00000').catch((err: unknown) => {
      if (!(err instanceof PageNotServedError && err.status === 404)) throw err;
    });
  });

  it('the workflow itself admits one payer return per interval, however many signals arrive', async () => {
    // What several API replicas could send together: signals straight to the workflow.
    const started = await checkout(THREE_DS);
    const id = started.sessionId as string;
    const t0 = Date.now();
    for (let i = 0; i < 30; i++) await s.payments.sessions.notifyPayerReturned(id);
    const elapsed = Date.now() - t0;
    // Signals that arrive during a workflow task join the history when it completes.
    const deadline = Date.now() + 15_000;
    while ((await signalsOf(id, 'payerReturned')) < 30 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(await signalsOf(id, 'payerReturned')).toBe(30);
    const view = await s.payments.sessions.get(id);
    const admitted = view.events.filter((e) => e.source === 'payer').length;
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThanOrEqual(Math.floor(elapsed / 5_000) + 1);
    await completeThreeDs(started.userAction, '00000'); // ends the session
  });

  it('with a partner return URL: 303 to it with ?session_id=', async () => {
    const secret = newReturnSecret();
    const other = buildApi({
      ...apiDepsFor(s.stack),
      apiTokens: ['x'],
      returnSecrets: [secret],
      returnUrl: 'https://shop.example/thanks?from=pay',
    });
    const { publicUrl } = await listenLocally(other);
    try {
      const { sessionId } = await threeDs('12345');
      const res = await request(`${publicUrl}/return/${sessionId}?t=${returnToken(secret, sessionId)}`, {
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

  it('without return secrets every return is a 404', async () => {
    const off = buildApi({ ...apiDepsFor(s.stack), apiTokens: ['x'] });
    const { publicUrl } = await listenLocally(off);
    try {
      const id = 'ps_999999996';
      const res = await request(`${publicUrl}/return/${id}?t=${returnToken(newReturnSecret(), id)}`);
      expect(res.statusCode).toBe(404);
      expect(await res.body.text()).toContain('data-outcome="not_found"');
    } finally {
      await off.close();
    }
  });
});
