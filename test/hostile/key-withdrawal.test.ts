/**
 * Hostile input (`npm run test:hostile`): the provider's service key leaks, and is withdrawn from a
 * running `paysaga dev` (real worker, sandbox and Temporal dev server) with `paysaga keys withdraw`, no
 * restart. Whoever holds the key then signs a success claim for a session that has already verified a
 * webhook signed with that key: sent to the API it is refused (401 withdrawn_key) within seconds; signaled
 * straight to the session's workflow, encrypted with the codec keys, as someone with write access to
 * Temporal would, it is refused by the worker's verification and changes nothing. The payer then really
 * pays: the provider's own webhooks, signed with the withdrawn key, are refused too, and the session
 * reaches the provider's truth by reading transaction/state.
 */
import { createPublicKey, createSign } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { request } from 'undici';
import { providerEventSignal } from '../../common/messages';
import { codecFromEnv } from '../../platform/codec';
import { keyFingerprint, ProviderClient, WITHDRAWN_KEYS_CHECK_MS } from '../../provider';
import { TEST_CARD } from '../../sandbox/test-cards';
import { runPaysaga } from '../helpers/cli-run';
import { FREE_PORTS, killDevProcess, startDevProcess, type DevProcess } from '../helpers/dev-process';
import { completeThreeDs } from '../helpers/payer';

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are inspected field by field */

describe('a leaked provider key withdrawn from a running paysaga', () => {
  let dev: DevProcess | undefined;
  let dataDir = '';
  let publicUrl = '';
  let temporal: { address: string; namespace: string };

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-withdraw-'));
    dev = await startDevProcess(dataDir, FREE_PORTS);
    publicUrl = /^ {2}Public\s+(\S+)/m.exec(dev.stdout())![1]!;
    const t = /^ {2}Temporal\s+(\S+)\s+namespace (\S+)/m.exec(dev.stdout())!;
    temporal = { address: t[1]!, namespace: t[2]! };
  }, 200_000);

  afterAll(() => {
    killDevProcess(dev);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const keyFile = (name: string) => path.join(dataDir, 'keys', name);
  const v1 = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
    const res = await request(`${dev!.apiUrl}${p}`, {
      method,
      headers: { authorization: `Bearer ${dev!.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: (await res.body.json().catch(() => undefined)) as any };
  };
  /** Signed with the provider's service key: what its thief can do. */
  const signed = (body: string) =>
    createSign('sha256')
      .update(body)
      .sign(fs.readFileSync(keyFile('service_private.pem'), 'utf8'), 'base64');
  const webhook = async (body: string) => {
    const res = await request(`${publicUrl}/webhooks/provider`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': signed(body) },
      body,
    });
    const answer = (await res.body.json().catch(() => undefined)) as any;
    return `${res.statusCode}${res.statusCode >= 400 ? ` ${String(answer?.error?.message).split(':')[0]}` : ''}`;
  };
  const audit = async (id: string) =>
    (await v1('GET', `/v1/sessions/${id}/provider-events`)).body.events as any[];
  const stateOf = async (id: string) => {
    const s = (await v1('GET', `/v1/sessions/${id}`)).body;
    return JSON.stringify([s.phase, s.final, s.lastSnapshot?.transaction_status, s.lastSnapshot?.updated_at]);
  };
  async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
    for (const deadline = Date.now() + ms; Date.now() < deadline;) {
      const found = await probe();
      if (found !== undefined) return found;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it('refuses everything the key signs from seconds after the withdrawal; the session ends on the provider’s truth', async () => {
    const started = await v1('POST', '/v1/checkouts?wait=15000', {
      reference: `withdraw-${Date.now()}`,
      method: 'card',
      amount: { amount: 7_000, currency: 'RUB' },
      card: { card_number: TEST_CARD.visa3ds, card_exp_month: '12', card_exp_year: '2030', card_code: '123' },
      customer: { user_id: 'withdraw' },
      // Webhooks on, as always; the session looks at transaction/state every few seconds when one is late
      // (and while the payer acts), so that the end of this test comes soon.
      settings: { polling: { lateAfterMs: 3_000, initialMs: 1_000, maxMs: 5_000, payerMaxMs: 5_000 } },
    });
    expect([started.status, started.body.phase]).toEqual([201, 'awaiting_payer']);
    const id = started.body.sessionId as string;
    const snapshot = started.body.lastSnapshot;

    // The session verifies a webhook signed with the key (the provider's own snapshot, sent again).
    const current = JSON.stringify({ type: 'action_pending', session_info: snapshot });
    expect(await webhook(current)).toBe('200');
    await until('the session to verify a webhook', 15_000, async () =>
      (await audit(id)).find((e) => ['applied', 'duplicate', 'older'].includes(e.outcome)),
    );

    // The key leaks: withdrawn with the CLI, by its public key file, while everything runs.
    const fingerprint = keyFingerprint(createPublicKey(fs.readFileSync(keyFile('service_public.pem'))));
    const withdrawnAt = Date.now();
    const cli = await runPaysaga(
      ['keys', 'withdraw', keyFile('service_public.pem'), '--data', dataDir, '--reason', 'leaked'],
      { HOME: os.tmpdir() },
    );
    expect([cli.code, cli.stderr]).toEqual([0, '']);
    expect(cli.stdout).toContain(`withdrawn ${fingerprint} in ${path.join(dataDir, 'withdrawn-keys')}`);

    // How soon the withdrawal holds: the provider's own (harmless) snapshot, signed with the key, is sent
    // again until the API refuses it.
    const refusedAfter = await until('the API to refuse the withdrawn key', 60_000, async () =>
      (await webhook(current)) === '401 withdrawn_key' ? Date.now() - withdrawnAt : undefined,
    );
    expect(refusedAfter).toBeLessThan(WITHDRAWN_KEYS_CHECK_MS + 3_000);

    // The thief's claim of success, signed with the withdrawn key, sent to the API.
    const before = await stateOf(id);
    const claim = JSON.stringify({
      type: 'checkout_results',
      session_info: { ...snapshot, transaction_status: 'completed', updated_at: new Date().toISOString() },
    });
    expect(await webhook(claim)).toBe('401 withdrawn_key');

    // The same claim signaled straight to the workflow, encrypted as paysaga's own signals are.
    await new Promise((r) =>
      setTimeout(r, Math.max(0, withdrawnAt + WITHDRAWN_KEYS_CHECK_MS + 500 - Date.now())),
    );
    const connection = await Connection.connect({ address: temporal.address });
    try {
      const codec = codecFromEnv({
        PAYSAGA_CODEC_KEYS: fs.readFileSync(path.join(dataDir, 'codec-keys'), 'utf8').trim(),
      })!;
      const client = new Client({
        connection,
        namespace: temporal.namespace,
        dataConverter: { payloadCodecs: [codec] },
      });
      const auditedBefore = (await audit(id)).length;
      await client.workflow.getHandle(id).signal(providerEventSignal, {
        receivedAt: new Date().toISOString(),
        via: 'webhook',
        signed: { body: claim, signature: signed(claim) },
      });
      const verdict = await until('the session to judge the signal', 20_000, async () => {
        const events = await audit(id);
        return events.length > auditedBefore ? events[events.length - 1] : undefined;
      });
      expect([verdict.outcome, String(verdict.detail).split(':')[0]]).toEqual(['refused', 'withdrawn_key']);
    } finally {
      await connection.close();
    }
    expect(await stateOf(id)).toBe(before);

    // The payer pays. The provider's webhooks are signed with the withdrawn key too: refused; the session
    // reads transaction/state and ends where the provider is.
    const paid = await completeThreeDs(started.body.userAction, '12345');
    expect(paid.status).toBeLessThan(400);
    const final = await until('the session to end', 120_000, async () => {
      const s = (await v1('GET', `/v1/sessions/${id}`)).body;
      return s.final ? s : undefined;
    });
    const provider = new ProviderClient({
      baseUrl: dev!.sandboxUrl,
      projectId: 'dev-shop',
      privateKey: keyFile('partner_private.pem'),
    });
    try {
      const truth = (await provider.state({ session_id: id })).session_info;
      expect([final.phase, final.lastSnapshot.transaction_status, final.lastSnapshot.updated_at]).toEqual([
        'succeeded',
        truth.transaction_status,
        truth.updated_at,
      ]);
    } finally {
      await provider.close();
    }
    // Nothing signed after the withdrawal was applied: the outcome came from the provider's state.
    const afterWithdrawal = (await audit(id)).filter((e) => Date.parse(e.receivedAt) >= withdrawnAt);
    expect(afterWithdrawal.filter((e) => e.outcome === 'applied')).toEqual([]);
  }, 300_000);
});
