/**
 * The hostile-input suite (`npm run test:hostile`, part of `npm test`): attacks against `paysaga dev`
 * started as a real process, each as an outsider would send it over HTTP
 * or through the Temporal CLI. Each row says what is expected, what was observed, and whether the
 * state it aimed at changed (it must not). The table is printed at the end (docs/reliability.md, "Hostile
 * input").
 *
 * Only loopback is ever contacted: outbound targets are refused at registration, before any lookup
 * of a private address could lead to a connection.
 */
import { createSign } from 'node:crypto';
import * as fs from 'node:fs';
import { connect } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { TEST_CARD } from '../../sandbox/test-cards';
import { FREE_PORTS, killDevProcess, startDevProcess, type DevProcess } from '../helpers/dev-process';
import { resolveTemporalCli } from '../../cli/temporal-cli';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are inspected field by field */

const run = promisify(execFile);

interface Row {
  attack: string;
  expected: string;
  observed: string;
  changed: string;
}

describe('hostile input against paysaga dev', () => {
  let dev: DevProcess | undefined;
  let dataDir = '';
  let publicUrl = '';
  let temporal = { address: '', namespace: '' };
  const rows: Row[] = [];

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-hostile-'));
    dev = await startDevProcess(dataDir, FREE_PORTS);
    publicUrl = /^ {2}Public\s+(\S+)/m.exec(dev.stdout())![1]!;
    const t = /^ {2}Temporal\s+(\S+)\s+namespace (\S+)/m.exec(dev.stdout())!;
    temporal = { address: t[1]!, namespace: t[2]! };
  }, 200_000);

  afterAll(() => {
    killDevProcess(dev);
    fs.rmSync(dataDir, { recursive: true, force: true });
    const header = ['attack', 'expected', 'observed', 'state changed'];
    const cells = rows.map((r) => [r.attack, r.expected, r.observed, r.changed]);
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
    const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
    process.stdout.write(
      `\nhostile input against paysaga dev\n${[
        line(header),
        line(widths.map((w) => '-'.repeat(w))),
        ...cells.map(line),
      ].join('\n')}\n`,
    );
  });

  const v1 = async (method: string, p: string, body?: unknown, token = dev!.token) => {
    const res = await request(`${dev!.apiUrl}${p}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.body.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, body: json };
  };
  const webhook = async (body: string | Buffer, signature: string) =>
    Number((await webhookAnswer(body, signature)).split(' ')[0]);
  /** The status and, for a refusal, the rule its message starts with (`400 ill_formed_text`). */
  const webhookAnswer = async (body: string | Buffer, signature: string) => {
    const res = await request(`${publicUrl}/webhooks/provider`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': signature },
      body,
    });
    const answer = (await res.body.json().catch(() => undefined)) as any;
    const rule = answer?.error?.message ? ` ${String(answer.error.message).split(':')[0]}` : '';
    return `${res.statusCode}${res.statusCode >= 400 ? rule : ''}`;
  };
  const signed = (body: string | Buffer) => {
    const key = fs.readFileSync(path.join(dataDir, 'keys', 'service_private.pem'), 'utf8');
    return createSign('sha256').update(body).sign(key, 'base64');
  };
  /** The session as the backend sees it: what must not move. */
  const stateOf = async (id: string) => {
    const s = (await v1('GET', `/v1/sessions/${id}`)).body;
    return JSON.stringify([s.phase, s.final, s.lastSnapshot?.updated_at, s.totals]);
  };
  const record = (attack: string, expected: string, observed: string, before: string, after: string) => {
    rows.push({
      attack,
      expected,
      observed,
      changed: before === after ? 'no' : `YES: ${before} -> ${after}`,
    });
    expect([attack, observed, before === after]).toEqual([attack, expected, true]);
  };

  let sessionId = '';
  let snapshot: any;
  it('a 3-D Secure checkout waits for its payer (the target)', async () => {
    const res = await v1('POST', '/v1/checkouts?wait=15000', {
      reference: `hostile-${Date.now()}`,
      method: 'card',
      amount: { amount: 5_000, currency: 'RUB' },
      card: { card_number: TEST_CARD.visa3ds, card_exp_month: '12', card_exp_year: '2030', card_code: '123' },
      customer: { user_id: 'hostile' },
    });
    expect([res.status, res.body.phase]).toEqual([201, 'awaiting_payer']);
    sessionId = res.body.sessionId;
    snapshot = res.body.lastSnapshot;
  });

  it('forged, replayed and reordered webhooks change nothing', async () => {
    const paid = {
      ...snapshot,
      transaction_status: 'completed',
      updated_at: new Date(Date.now() + 60_000).toISOString(),
    };
    const claim = JSON.stringify({ type: 'checkout_results', session_info: paid });
    let before = await stateOf(sessionId);
    record(
      'webhook claiming success, made-up signature',
      '401',
      String(await webhook(claim, 'AAAA')),
      before,
      await stateOf(sessionId),
    );
    record(
      'webhook signed, body changed afterwards',
      '401',
      String(await webhook(claim.replace('"completed"', '"completed" '), signed(claim))),
      before,
      await stateOf(sessionId),
    );
    const foreign = JSON.stringify({
      type: 'checkout_results',
      session_info: { ...snapshot, id: '../ref-x' },
    });
    record(
      'webhook signed, for a session id that is not ps_<digits>',
      '400',
      String(await webhook(foreign, signed(foreign))),
      before,
      await stateOf(sessionId),
    );
    // Signed text that two readers could read differently: a lone surrogate escaped in a JSON string
    // (U+FFFD to one, the raw surrogate to another), and bytes that are not UTF-8.
    const surrogate = JSON.stringify({ type: 'checkout_results', session_info: { ...paid, note: '\ud800' } });
    expect(surrogate).toContain('"note":"\\ud800"');
    record(
      'webhook signed, a JSON string with a lone surrogate (\\ud800)',
      '400 ill_formed_text',
      await webhookAnswer(surrogate, signed(surrogate)),
      before,
      await stateOf(sessionId),
    );
    const notUtf8 = Buffer.concat([
      Buffer.from(claim.slice(0, -2)),
      Buffer.from(',"note":"\xff"}}', 'latin1'),
    ]);
    record(
      'webhook signed, bytes that are not UTF-8',
      '400 ill_formed_text',
      await webhookAnswer(notUtf8, signed(notUtf8)),
      before,
      await stateOf(sessionId),
    );
    // The provider's own current snapshot, signed: a duplicate of what the session holds, each time.
    const current = JSON.stringify({ type: 'checkout_results', session_info: snapshot });
    before = await stateOf(sessionId);
    const replay = await audited(() => webhook(current, signed(current)));
    record('the same signed webhook replayed', '200 (duplicate)', replay, before, await stateOf(sessionId));
    const old = JSON.stringify({
      type: 'checkout_results',
      session_info: { ...snapshot, transaction_status: 'created', updated_at: '2020-01-01T00:00:00Z' },
    });
    const reordered = await audited(() => webhook(old, signed(old)));
    record(
      'an older signed webhook after a newer one',
      '200 (older)',
      reordered,
      before,
      await stateOf(sessionId),
    );
  }, 60_000);

  /** Sends a webhook; its status and the outcome of the audit entry it added. */
  async function audited(send: () => Promise<number>): Promise<string> {
    const audit = async () =>
      (await v1('GET', `/v1/sessions/${sessionId}/provider-events`)).body.events as any[];
    const before = (await audit()).length;
    const status = await send();
    for (const deadline = Date.now() + 15_000; Date.now() < deadline;) {
      const events = await audit();
      if (events.length > before) return `${status} (${events[events.length - 1].outcome})`;
      await new Promise((r) => setTimeout(r, 200));
    }
    return `${status} (not in the audit)`;
  }

  it('a plain signal through the Temporal CLI claiming success is refused', async () => {
    const before = await stateOf(sessionId);
    const paid = {
      ...snapshot,
      transaction_status: 'completed',
      updated_at: new Date(Date.now() + 60_000).toISOString(),
    };
    await run(resolveTemporalCli().path!, [
      'workflow',
      'signal',
      '--address',
      temporal.address,
      '--namespace',
      temporal.namespace,
      '--workflow-id',
      sessionId,
      '--name',
      'providerEvent',
      '--input',
      JSON.stringify({
        event: { type: 'checkout_results', session_info: paid },
        receivedAt: new Date().toISOString(),
        via: 'webhook',
      }),
    ]);
    let outcome = '';
    for (const deadline = Date.now() + 20_000; Date.now() < deadline && !outcome;) {
      const events = (await v1('GET', `/v1/sessions/${sessionId}/provider-events`)).body.events as any[];
      const refused = events.find((e) => e.outcome === 'refused');
      if (refused) outcome = `refused (${String(refused.detail).split(':')[0]})`;
      else await new Promise((r) => setTimeout(r, 250));
    }
    record(
      'CLI signal, unencrypted, claiming success',
      'refused (unencrypted)',
      outcome,
      before,
      await stateOf(sessionId),
    );
  }, 60_000);

  it('SSRF targets are refused at registration', async () => {
    const count = async () => (await v1('GET', '/v1/event-endpoints')).body.endpoints.length as number;
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/hook',
      'https://192.168.1.1/hook',
      'http://[fe80::1]/hook',
      // IPv6 forms that reach an IPv4 address (6to4, NAT64, mapped), deprecated ranges, the 6to4 relay.
      'https://[2002:a9fe:a9fe::]/hook',
      'https://[64:ff9b::a9fe:a9fe]/hook',
      'https://[::ffff:169.254.169.254]/hook',
      'https://[::a00:1]/hook',
      'https://[fec0::1]/hook',
      'https://192.88.99.1/hook',
    ]) {
      const before = String(await count());
      const res = await v1('POST', '/v1/event-endpoints', { url });
      record(
        `event endpoint ${url}`,
        '400 url',
        `${res.status} ${res.body?.error?.fields?.[0]?.field}`,
        before,
        String(await count()),
      );
    }
  });

  it('oversized, deeply nested and wrongly typed bodies are 4xx naming what is wrong', async () => {
    const sessions = async () => String((await v1('GET', '/v1/sessions?limit=100')).body.sessions.length);
    const base = { method: 'card', amount: { amount: 100, currency: 'RUB' }, customer: { user_id: 'h' } };
    let before = await sessions();
    const big = await v1('POST', '/v1/checkouts', {
      ...base,
      reference: 'h-big',
      extraInfo: 'x'.repeat(2 * 1024 * 1024),
    });
    record('a 2 MiB body', '413', String(big.status), before, await sessions());
    let deep: unknown = 'x';
    for (let i = 0; i < 60; i++) deep = { a: deep };
    const subscription = {
      token: 'rt_1',
      amount: { amount: 1, currency: 'RUB' },
      schedule: { interval: 'month' },
      customer: { user_id: 'h' },
    };
    const refusals: [string, string, string, object][] = [
      [
        'extraInfo nested 60 deep',
        'extraInfo',
        '/v1/checkouts',
        { ...base, reference: 'h-deep', extraInfo: deep },
      ],
      [
        'amount as a string',
        'amount.amount',
        '/v1/checkouts',
        { ...base, reference: 'h-typed', amount: { amount: 'lots', currency: 'RUB' } },
      ],
      [
        'a billing anchor 70 years ahead',
        'schedule.anchor',
        '/v1/subscriptions',
        {
          ...subscription,
          reference: 'h-sub',
          schedule: { interval: 'month', anchor: '2096-12-01T09:00:00Z' },
        },
      ],
      [
        'a billing anchor in epoch seconds',
        'schedule.anchor',
        '/v1/subscriptions',
        { ...subscription, reference: 'h-sub2', schedule: { interval: 'month', anchor: 1.7e9 } },
      ],
    ];
    for (const [attack, field, route, body] of refusals) {
      const res = await v1('POST', route, body);
      record(
        attack,
        `400 ${field}`,
        `${res.status} ${res.body?.error?.fields?.[0]?.field}`,
        before,
        await sessions(),
      );
    }
    before = await sessions();
    const notJson = await v1('POST', '/v1/checkouts', '{"method": "card",');
    record('a body that is not JSON', '400', String(notJson.status), before, await sessions());
  });

  it('a slow-body client is cut off while webhooks keep being accepted', async () => {
    const url = new URL(`${publicUrl}/webhooks/provider`);
    const socket = connect(Number(url.port), url.hostname);
    const closed = new Promise<number>((resolve) => {
      const started = Date.now();
      socket.on('close', () => resolve(Date.now() - started));
    });
    socket.on('error', () => undefined);
    socket.write(
      `POST /webhooks/provider HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{`,
    );
    const trickle = setInterval(() => socket.writable && socket.write(' '), 1_000);
    // Meanwhile another client is served at once.
    const served = await webhook('{}', 'AAAA');
    const cutAfter = await closed;
    clearInterval(trickle);
    rows.push({
      attack: 'a body trickled one byte a second',
      expected: 'cut off after 30 s (+ the 1 s check); others served',
      observed: `cut off after ${Math.round(cutAfter / 1000)} s; another webhook answered ${served}`,
      changed: 'no',
    });
    // The request timeout is 30 s, checked each second; the close reaches this socket just after.
    expect(cutAfter).toBeLessThan(34_000);
    expect(served).toBe(401);
  }, 45_000);

  it('guessing tokens is cut off with 429 (last: it blocks this address for a minute)', async () => {
    const statuses: number[] = [];
    // Each guess claims another client address: with no trusted proxy configured (PAYSAGA_TRUST_PROXY),
    // X-Forwarded-For is not read, and the guesses all count against this socket's address.
    for (let i = 0; i < 22; i++) {
      const res = await request(`${dev!.apiUrl}/v1/sessions`, {
        headers: {
          authorization: `Bearer guess-${i}-${'x'.repeat(32)}`,
          'x-forwarded-for': `198.51.100.${i + 1}`,
        },
      });
      await res.body.dump();
      statuses.push(res.statusCode);
    }
    const withValid = (await v1('GET', '/v1/sessions')).status;
    rows.push({
      attack: '22 guessed tokens, each from a new X-Forwarded-For, then the real one',
      expected: '401 x20, then 429',
      observed: `401 x${statuses.filter((s) => s === 401).length}, 429 x${statuses.filter((s) => s === 429).length}; real token: ${withValid}`,
      changed: 'no',
    });
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429]);
    expect(withValid).toBe(429);
  });
});
