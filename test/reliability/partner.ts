/**
 * The partner's backend and its payers, played over HTTP while the faults run: every session of the
 * plan is created through the API (`PaysagaApiClient`), its payer acts on the sandbox's pages, its
 * decisions and refunds are sent at the plan's moments, and subscriptions are charged for their periods
 * and then canceled. A call answered 5xx or not at all is sent again (the same reference: the same
 * session or refund) for as long as the partner's patience lasts, alternating the APIs, as a backend
 * behind a load balancer would. Everything heard is written to the journal.
 */
import { PaysagaApiError, PaysagaNetworkError, type PaysagaApiClient, type Session } from '../../client/http';
import type { CheckoutInput, PayoutInput, SubscriptionInput } from '../../client/http/endpoints';
import { firstForm, openPage, postJson } from '../../cli/dev/demo-http';
import type {
  Answer,
  DecisionRecord,
  Journal,
  RefundRecord,
  SessionRecord,
  SubscriptionRecord,
} from './journal';
import type { DecisionPlan, SessionPlan } from './plan';
import type { Profile } from './profiles';
import { TEST_CARD } from '../../sandbox/test-cards';

export interface PartnerContext {
  profile: Profile;
  apis: PaysagaApiClient[];
  journal: Journal;
  /** Epoch ms of the plan's time 0. */
  startedAt: number;
  log(message: string): void;
}

// Test cards of the sandbox (sandbox/README.md); never printed.
const CARDS = {
  frictionless: [TEST_CARD.visa, TEST_CARD.mastercard, TEST_CARD.mir],
  three_ds: [TEST_CARD.visa3ds, TEST_CARD.mastercard3ds, TEST_CARD.mir3ds],
  declined: [TEST_CARD.visaDeclined],
} as const;
const FPS_PHONE = '+79001234567';
const FINAL = new Set(['succeeded', 'failed', 'canceled']);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** The recurring tokens the first card checkouts obtained (whatever they got once they ended). */
export class Tokens {
  private readonly got: string[] = [];
  private settle!: () => void;
  private readonly ready = new Promise<void>((r) => (this.settle = r));
  private pending: number;
  constructor(expected: number) {
    this.pending = expected;
    if (expected === 0) this.settle();
  }
  done(token: string | undefined): void {
    if (token) this.got.push(token);
    if (--this.pending === 0) this.settle();
  }
  async pick(i: number): Promise<string | undefined> {
    await this.ready;
    return this.got.length ? this.got[i % this.got.length] : undefined;
  }
}

/** The create request of a session: built once, sent the same every time (a repeat must be the same). */
export function createRequest(
  p: SessionPlan,
  profile: Profile,
  token: string | undefined,
): { route: string; send: (api: PaysagaApiClient) => Promise<Session> } {
  const customer = {
    user_id: `u-${p.index}`,
    ...(p.customer !== 'ok' ? { customer: { reference: p.customer } } : {}),
  };
  const settings = {
    approval:
      p.approval === 'manual'
        ? { mode: 'manual' as const, deadlineMs: p.decisionDeadlineMs }
        : { mode: 'auto' as const },
    finalization:
      p.finalization === 'manual'
        ? { mode: 'manual' as const, deadlineMs: p.decisionDeadlineMs }
        : p.finalization === 'auto_partial'
          ? { mode: 'auto_partial' as const, amount: p.partialAmount! }
          : { mode: 'auto' as const },
    polling: { webhooks: p.webhooks, lateAfterMs: 4_000, initialMs: 1_000, maxMs: 8_000, factor: 2 },
    deadlines: {
      payerActionMs: profile.payerActionMs,
      sessionMs: profile.sessionMs,
      startMs: profile.startMs,
    },
    followMs: profile.followMs,
    recheckMs: profile.recheckMs,
  };
  const common = {
    reference: p.reference,
    amount: { amount: p.amount, currency: 'RUB' },
    customer,
    // The order this pays for, at the provider too: how the verdict ties a provider session to an order.
    extraInfo: { order: p.reference },
    settings,
  };
  const wait = { waitMs: 2_000, maxRetries: 0, timeoutMs: 40_000 };
  const cardOf = (kind: keyof typeof CARDS) => ({
    card_number: CARDS[kind][p.index % CARDS[kind].length]!,
    card_exp_month: '12',
    card_exp_year: '30',
    card_code: '123',
  });
  switch (p.kind) {
    case 'fps': {
      const input: CheckoutInput = {
        ...common,
        method: 'fps',
        qrRenewals: p.qrRenewals ?? 0,
        moneyPurpose: 'reliability',
      };
      return { route: 'POST /v1/checkouts', send: (api) => api.checkouts.create(input, wait) };
    }
    case 'recurring': {
      const input: CheckoutInput = { ...common, method: 'recurring', token: token!, initiatedBy: 'merchant' };
      return { route: 'POST /v1/checkouts', send: (api) => api.checkouts.create(input, wait) };
    }
    case 'payout': {
      if (p.payout === 'batch') {
        // Several payouts in one session, sent one at a time; the plan's customer on the first only.
        const { amount: _one, customer: _c, ...rest } = common;
        const batch: PayoutInput = {
          ...rest,
          payouts: Array.from({ length: p.batch ?? 2 }, (_, i) => ({
            reference: `${p.reference}-${i + 1}`,
            amount: { amount: p.amount + i * 7, currency: 'RUB' },
            destination: { type: 'fps_account' as const, phone: '+79001234567', bankId: '100000000111' },
            customer: i === 0 ? customer : { user_id: `u-${p.index}` },
          })),
        };
        return { route: 'POST /v1/payouts', send: (api) => api.payouts.create(batch, wait) };
      }
      const input: PayoutInput = {
        ...common,
        destination:
          p.payout === 'token'
            ? { type: 'recurring_token', token: token! }
            : { type: 'card', card: { card_number: CARDS.frictionless[p.index % 3]! } },
      };
      return { route: 'POST /v1/payouts', send: (api) => api.payouts.create(input, wait) };
    }
    default: {
      const input: CheckoutInput = {
        ...common,
        method: 'card',
        card: cardOf(p.card ?? 'frictionless'),
        ...(p.kind === 'token' ? { allowRecurring: true } : {}),
      };
      return { route: 'POST /v1/checkouts', send: (api) => api.checkouts.create(input, wait) };
    }
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error?: PaysagaApiError };

export class Partner {
  readonly tokens: Tokens;
  constructor(private readonly ctx: PartnerContext) {
    this.tokens = new Tokens(ctx.journal.sessions.filter((r) => r.plan.kind === 'token').length);
  }

  private count(key: string): void {
    this.ctx.journal.answers.set(key, (this.ctx.journal.answers.get(key) ?? 0) + 1);
  }

  /**
   * One call, sent again while it is answered 5xx or not at all (on the other API after a network
   * failure), until the partner's patience runs out. A 4xx is the answer.
   */
  async call<T>(
    route: string,
    preferred: number,
    fn: (api: PaysagaApiClient) => Promise<T>,
    answers: Answer[],
    patienceMs = this.ctx.profile.partnerPatienceMs,
  ): Promise<Outcome<T>> {
    const until = Date.now() + patienceMs;
    let which = preferred;
    let pause = 500;
    for (;;) {
      const api = this.ctx.apis[which % this.ctx.apis.length]!;
      try {
        const value = await fn(api);
        const status = (value as { lastResponse?: { status: number } }).lastResponse?.status ?? 200;
        answers.push({ at: Date.now(), status });
        this.count(`${route} ${status}`);
        return { ok: true, value };
      } catch (err) {
        if (err instanceof PaysagaApiError) {
          answers.push({ at: Date.now(), status: err.status, code: err.code });
          this.count(`${route} ${err.status}`);
          if (err.status === 500)
            this.ctx.journal.internalErrors.push(
              `${new Date().toISOString()} ${route}: ${err.code}: ${err.apiMessage}`,
            );
          // A refusal is final, unless the API says to try again (409 reference_in_use: another
          // request, perhaps one whose API died, still holds the reference for a while).
          if (err.status < 500 && !err.retryable) return { ok: false, error: err };
        } else if (err instanceof PaysagaNetworkError) {
          answers.push({
            at: Date.now(),
            network: err.timedOut ? 'timeout' : err.message.replace(/^.*\(|\).*$/g, ''),
          });
          this.count(`${route} network`);
          which++;
        } else throw err;
      }
      if (Date.now() + pause > until) return { ok: false };
      await sleep(pause);
      pause = Math.min(pause * 2, 5_000);
    }
  }

  /** Reads the session (long polls) until `done`, its end, or `ms`; the last view seen, if any. */
  async follow(rec: SessionRecord, done: (v: Session) => boolean, ms: number): Promise<Session | undefined> {
    const id = rec.sessionIds[0]!;
    const until = Date.now() + ms;
    let view: Session | undefined;
    let which = rec.plan.api;
    while (Date.now() < until) {
      try {
        const wait = Math.min(20_000, Math.max(0, until - Date.now()));
        view = await this.ctx.apis[which % this.ctx.apis.length]!.sessions.get(id, {
          query: { wait: view ? wait : 0, ...(view ? { after: view.version } : {}) },
          maxRetries: 0,
          timeoutMs: 35_000,
        });
        if (done(view) || view.final) return view;
      } catch (err) {
        if (!(err instanceof PaysagaApiError) && !(err instanceof PaysagaNetworkError)) throw err;
        if (err instanceof PaysagaApiError && err.status === 500)
          this.ctx.journal.internalErrors.push(
            `${new Date().toISOString()} GET /v1/sessions/{id}: ${err.code}`,
          );
        which++;
        await sleep(1_000);
      }
    }
    return view;
  }

  private at(ms: number): Promise<void> {
    return sleep(this.ctx.startedAt + ms - Date.now());
  }

  // ---- sessions ----

  async session(rec: SessionRecord): Promise<void> {
    const p = rec.plan;
    await this.at(p.atMs);
    let token: string | undefined;
    if (p.kind === 'recurring' || (p.kind === 'payout' && p.payout === 'token')) {
      token = await this.tokens.pick(p.index);
      if (!token) {
        rec.note = 'no recurring token: the token checkouts got none';
        return;
      }
    }
    const request = createRequest(p, this.ctx.profile, token);
    const created = await this.create(rec, request);
    if (p.kind === 'token') {
      const end = created
        ? await this.follow(rec, () => false, this.ctx.profile.partnerPatienceMs)
        : undefined;
      this.tokens.done(end?.phase === 'succeeded' ? end.recurringToken : undefined);
      return;
    }
    if (!created) return;
    await Promise.all([
      ...p.decisions.map((d) => this.decide(rec, d)),
      this.payer(rec),
      this.refunds(rec),
      p.repeatAfterMs !== undefined ? this.repeat(rec, request, p.repeatAfterMs) : undefined,
    ]);
  }

  private async create(rec: SessionRecord, request: ReturnType<typeof createRequest>): Promise<boolean> {
    const answer = await this.call(request.route, rec.plan.api, request.send, rec.createAnswers);
    if (!answer.ok) {
      rec.note = answer.error
        ? `create refused: ${answer.error.status} ${answer.error.code}`
        : 'create: no answer but 5xx or none while the partner waited';
      return false;
    }
    this.named(rec, answer.value.sessionId);
    rec.created = true;
    return true;
  }

  private named(rec: SessionRecord, sessionId: string): void {
    if (!rec.sessionIds.includes(sessionId)) rec.sessionIds.push(sessionId);
  }

  /** The same create again (a backend that retried): it must name the same session and start nothing. */
  private async repeat(rec: SessionRecord, request: ReturnType<typeof createRequest>, afterMs: number) {
    await sleep(afterMs);
    const answer = await this.call(request.route, rec.plan.api + 1, request.send, rec.createAnswers);
    if (answer.ok) {
      rec.repeatedAs = answer.value.sessionId;
      this.named(rec, answer.value.sessionId);
    }
  }

  /** Sends the session's create once more (the roll call after the run): the session it names. */
  async rollCall(rec: SessionRecord, token: string | undefined): Promise<void> {
    const request = createRequest(rec.plan, this.ctx.profile, token);
    const answer = await this.call(request.route, rec.plan.api, request.send, rec.createAnswers, 60_000);
    if (answer.ok) {
      this.named(rec, answer.value.sessionId);
      rec.created = true;
    }
  }

  private async decide(rec: SessionRecord, d: DecisionPlan): Promise<void> {
    const record: DecisionRecord = { plan: d, answers: [] };
    rec.decisions.push(record);
    const patience = this.ctx.profile.partnerPatienceMs;
    const asked = (v: Session) =>
      d.kind === 'approve'
        ? v.phase === 'awaiting_approval'
        : d.kind === 'finalize'
          ? v.phase === 'awaiting_finalization'
          : v.phase === 'awaiting_approval' || v.phase === 'awaiting_finalization';
    let moment = d.moment;
    for (let round = 0; round < 2; round++) {
      if (moment === 'asked') {
        const view = await this.follow(rec, asked, patience);
        if (!view || view.final || !asked(view)) {
          record.outcome = 'skipped';
          record.code = view ? `never asked (${view.phase})` : 'session not readable';
          return;
        }
        record.phaseWhenSent = view.phase;
      }
      await sleep(d.afterMs);
      const id = rec.sessionIds[0]!;
      const route = `POST /v1/sessions/{id}/${d.kind}`;
      const answer = await this.call(
        route,
        rec.plan.api,
        (api) =>
          d.kind === 'approve'
            ? api.sessions.approve(id, {}, { maxRetries: 0, timeoutMs: 40_000 })
            : d.kind === 'cancel'
              ? api.sessions.cancel(id, { reason: 'reliability' }, { maxRetries: 0, timeoutMs: 40_000 })
              : api.sessions.finalize(id, d.amount !== undefined ? { amount: d.amount } : {}, {
                  maxRetries: 0,
                  timeoutMs: 40_000,
                }),
        record.answers,
      );
      if (answer.ok) {
        record.outcome = answer.value.lastResponse.status === 202 ? 'accepted' : 'carried_out';
        return;
      }
      if (!answer.error) {
        record.outcome = 'gave_up';
        return;
      }
      record.outcome = 'refused';
      record.code = answer.error.code;
      // Too early: a partner sends it again once the session asks for it.
      if (moment === 'anytime' && /^not_awaiting/.test(answer.error.code)) moment = 'asked';
      else return;
    }
  }

  private async payer(rec: SessionRecord): Promise<void> {
    const p = rec.plan;
    if (!p.payer) return;
    const patience = this.ctx.profile.partnerPatienceMs;
    if (p.kind === 'three_ds') {
      const view = await this.follow(rec, (v) => !!v.userAction?.destination_info, patience);
      const dest = view?.userAction?.destination_info;
      if (!dest?.url_address) return void rec.payer.push(`no 3-D Secure page (${view?.phase ?? 'unread'})`);
      if (p.payer === 'abandon') return void rec.payer.push('left the 3-D Secure page');
      await sleep(p.payerDelayMs ?? 0);
      rec.payer.push(await threeDs(dest, p.payer === 'pass' ? '12345' : '00000'));
      return;
    }
    // FPS: the QR of the first payment, or of a renewed one once the first expired.
    const qrOf = (v: Session | undefined) => v?.userAction?.payment_qr?.qr_data?.qr_content;
    const first = await this.follow(rec, (v) => typeof qrOf(v) === 'string', patience);
    const firstQr = qrOf(first);
    if (typeof firstQr !== 'string') return void rec.payer.push(`no QR (${first?.phase ?? 'unread'})`);
    if (p.payer === 'never') return void rec.payer.push('never paid');
    let qr = firstQr;
    if (p.payer === 'pay_renewed') {
      const renewed = await this.follow(
        rec,
        (v) => typeof qrOf(v) === 'string' && qrOf(v) !== firstQr,
        patience,
      );
      const next = qrOf(renewed);
      if (typeof next !== 'string')
        return void rec.payer.push(`no renewed QR (${renewed?.phase ?? 'unread'})`);
      qr = next;
    }
    await sleep(p.payerDelayMs ?? 0);
    try {
      const res = await postJson(`${qr}/pay`, { phone_number: FPS_PHONE });
      rec.payer.push(`paid ${p.payer === 'pay_renewed' ? 'the renewed' : 'the first'} QR: ${res.status}`);
    } catch (err) {
      rec.payer.push(`the bank app failed: ${(err as Error).message}`);
    }
  }

  private async refunds(rec: SessionRecord): Promise<void> {
    const p = rec.plan;
    if (p.refunds.length === 0) return;
    const records: RefundRecord[] = p.refunds.map((r, k) => ({
      reference: `${p.reference}-r${k + 1}`,
      ...(r.amount !== undefined ? { amount: r.amount } : {}),
      answers: [],
    }));
    rec.refunds.push(...records);
    const paid = await this.follow(
      rec,
      () => false,
      this.ctx.profile.partnerPatienceMs + this.ctx.profile.sessionMs,
    );
    if (paid?.phase !== 'succeeded') {
      for (const r of records) {
        r.outcome = 'skipped';
        r.code = `payment ${paid?.phase ?? 'unread'}`;
      }
      return;
    }
    const send = async (r: RefundRecord, k: number) => {
      await sleep(p.refunds[k]!.afterMs);
      const answer = await this.call(
        'POST /v1/sessions/{id}/refunds',
        p.api,
        (api) =>
          api.sessions.refund(
            rec.sessionIds[0]!,
            { reference: r.reference, ...(r.amount !== undefined ? { amount: r.amount } : {}) },
            { waitMs: 2_000, maxRetries: 0, timeoutMs: 40_000 },
          ),
        r.answers,
      );
      r.outcome = answer.ok ? 'taken' : answer.error ? 'refused' : 'gave_up';
      if (!answer.ok && answer.error) r.code = answer.error.code;
    };
    if (p.concurrentRefunds) {
      await Promise.all(records.map((r, k) => send(r, k)));
      return;
    }
    for (const [k, r] of records.entries()) {
      await send(r, k);
      // The next refund once this one has ended (what is left depends on it).
      await this.follow(
        rec,
        (v) =>
          v.refunds.some(
            (x) => x.reference === r.reference && (x.status === 'succeeded' || x.status === 'failed'),
          ),
        this.ctx.profile.partnerPatienceMs,
      );
    }
  }

  // ---- subscriptions ----

  async subscription(rec: SubscriptionRecord): Promise<void> {
    const p = rec.plan;
    await this.at(p.atMs);
    const token = await this.tokens.pick(p.index);
    if (!token) {
      rec.note = 'no recurring token';
      return;
    }
    const profile = this.ctx.profile;
    const input: SubscriptionInput = {
      reference: p.reference,
      token,
      amount: { amount: p.amount, currency: 'RUB' },
      schedule: { interval: 'second', count: Math.max(1, Math.round(p.intervalMs / 1_000)) },
      customer: { user_id: `sub-${p.reference}`, ...(p.failing ? { customer: { reference: 'loser' } } : {}) },
      dunning: { retryDelaysMs: p.dunningMs, onExhausted: 'cancel' },
      // What stays unpaid is written off at once: the run ends every subscription it started.
      policy: { owed: 'write_off' },
      settings: {
        polling: { lateAfterMs: 4_000, initialMs: 1_000, maxMs: 8_000, factor: 2 },
        deadlines: {
          payerActionMs: profile.payerActionMs,
          sessionMs: profile.sessionMs,
          startMs: profile.startMs,
        },
        followMs: profile.followMs,
        recheckMs: profile.recheckMs,
      },
    };
    const created = await this.call(
      'POST /v1/subscriptions',
      p.api,
      (api) => api.subscriptions.create(input, { maxRetries: 0, timeoutMs: 40_000 }),
      rec.answers,
    );
    if (!created.ok) {
      rec.note = created.error ? `create refused: ${created.error.code}` : 'create: no answer';
      return;
    }
    const id = created.value.subscriptionId;
    rec.subscriptionId = id;
    // Charged for its periods (or ended by dunning), within the periods' time and the partner's patience.
    const until =
      Date.now() +
      p.periods * p.intervalMs +
      p.dunningMs.reduce((a, b) => a + b, 0) +
      profile.partnerPatienceMs;
    let which = p.api;
    while (Date.now() < until) {
      try {
        const v = await this.ctx.apis[which % this.ctx.apis.length]!.subscriptions.get(id, { maxRetries: 0 });
        if (v.status !== 'active' || v.totals.succeeded >= p.periods || v.period > p.periods) break;
      } catch (err) {
        if (!(err instanceof PaysagaApiError) && !(err instanceof PaysagaNetworkError)) throw err;
        which++;
      }
      await sleep(2_000);
    }
    const canceled = await this.call(
      'POST /v1/subscriptions/{id}/cancel',
      p.api,
      (api) =>
        api.subscriptions.cancel(
          id,
          { reason: 'reliability run over' },
          { maxRetries: 0, timeoutMs: 40_000 },
        ),
      rec.answers,
    );
    rec.canceled = canceled.ok || canceled.error?.status === 409;
  }
}

/** The payer on the 3-D Secure page: types the code, then follows the page back to paysaga's return page. */
async function threeDs(
  dest: NonNullable<NonNullable<Session['userAction']>['destination_info']>,
  code: string,
): Promise<string> {
  try {
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...dest.additional_params, ...dest.extra_params }))
      params[k] = String(v);
    const page = await openPage(dest.url_address!, dest.http_method === 'POST' ? 'POST' : 'GET', params);
    const form = firstForm(page.html, page.url);
    if (page.status !== 200 || !form) return `3-D Secure page not served (${page.status})`;
    const submitted = await openPage(form.action, form.method === 'GET' ? 'GET' : 'POST', {
      ...form.fields,
      code,
    });
    let back = submitted;
    if (submitted.location) back = await openPage(submitted.location, 'GET');
    else {
      const auto = firstForm(submitted.html, submitted.url);
      if (!auto)
        return `typed ${code === '12345' ? 'the right' : 'a wrong'} code; not sent back (${submitted.status})`;
      back = await openPage(auto.action, auto.method === 'GET' ? 'GET' : 'POST', auto.fields);
    }
    const outcome = /data-outcome="([^"]+)"/.exec(back.html)?.[1] ?? `HTTP ${back.status}`;
    return `typed ${code === '12345' ? 'the right' : 'a wrong'} code; return page: ${outcome}`;
  } catch (err) {
    // A return page of an API that is restarting: the payer sees an error, the session learns anyway.
    return `3-D Secure: ${(err as Error).message}`;
  }
}

export { FINAL };
