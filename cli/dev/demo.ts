/**
 * What `paysaga demo` does against a running stack: one scenario per session kind, each end to end
 * through the HTTP API with the typed client of `client/http` (and, where a person or a bank would
 * act, the sandbox's payer pages and simulation routes). Scenarios run concurrently; `recurring` and
 * `subscription` wait for the token the card checkout obtained.
 *
 * The dev sandbox's one project has `hold: true`: card payments stop at finalization_pending and the
 * session's finalization policy decides. Every scenario keeps the default (auto: the whole hold is
 * charged at once) except `hold`, which asks for `manual` and finalizes part of the hold through
 * `POST /v1/sessions/{id}/finalize`.
 */
import { randomBytes } from 'node:crypto';
import type { CheckoutInput, Links, PaysagaApiClient, Session, Subscription } from '../../client/http';
import { reasonText } from '../../common/reasons';
import { firstForm, openPage, postJson } from './demo-http';
import { TEST_CARD } from '../../sandbox/test-cards';

export const DEMO_KINDS = [
  'card',
  'three-ds',
  'payment-form',
  'fps',
  'fps-widget',
  'hold',
  'refund',
  'payout',
  'payouts',
  'identity-check',
  'chargeback',
  'fps-binding',
  'recurring',
  'subscription',
] as const;
export type DemoKind = (typeof DEMO_KINDS)[number];

export interface DemoContext {
  api: PaysagaApiClient;
  /** Base URL of the sandbox (simulation routes: chargebacks). */
  sandboxUrl: string;
  temporalUiUrl: string;
  namespace: string;
  /** How long one scenario may take. */
  timeoutMs: number;
  /** Periods the subscription scenario charges before it cancels (default 2). */
  subscriptionPeriods?: number;
  progress: (kind: DemoKind, message: string) => void;
}

export interface DemoResult {
  kind: DemoKind;
  sessionId?: string;
  ok: boolean;
  outcome: string;
  temporalUrl?: string;
  ms: number;
}

// Test cards of the sandbox (sandbox/README.md); never printed.
const FRICTIONLESS = TEST_CARD.visa;
const THREE_DS = TEST_CARD.visa3ds;
const card = (pan: string) => ({
  card_number: pan,
  card_exp_month: '12',
  card_exp_year: '30',
  card_code: '123',
});
const rub = (amount: number) => ({ amount, currency: 'RUB' });
const FPS_PHONE = '+79001234567';
/** The payer as the partner knows them (card payments need user_info). */
const CUSTOMER = { user_id: 'demo-payer' };
const SANDBOX_BANK = '100000000999';
const FPS_ACCOUNT = { type: 'fps_account' as const, phone: FPS_PHONE, bankId: SANDBOX_BANK };
const FINAL = new Set(['succeeded', 'failed', 'canceled']);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** One long poll of a session; the API answers within 25 s, the client waits 35 s. */
const LONG_POLL_MS = 20_000;

class Scenario {
  sessionId?: string;
  temporalUrl?: string;
  readonly api: PaysagaApiClient;
  private readonly deadline: number;

  constructor(
    readonly kind: DemoKind,
    private readonly ctx: DemoContext,
    private readonly run: string,
  ) {
    this.api = ctx.api;
    this.deadline = Date.now() + ctx.timeoutMs;
  }

  ref(suffix = ''): string {
    return `demo-${this.kind}-${this.run}${suffix}`;
  }

  say(message: string): void {
    this.ctx.progress(this.kind, message);
  }

  /** Remembers the session or workflow (the first one a scenario creates is the one in the table). */
  track(id: string, links?: Partial<Links>): void {
    if (this.sessionId) return;
    this.sessionId = id;
    this.temporalUrl =
      links?.temporal ??
      `${this.ctx.temporalUiUrl}/namespaces/${encodeURIComponent(this.ctx.namespace)}/workflows/${encodeURIComponent(id)}`;
  }

  /** A session this scenario just created. */
  created(view: Session): Session {
    this.track(view.sessionId, view.links);
    this.say(`${view.sessionId} created: ${describe(view)}`);
    return view;
  }

  get(sessionId: string): Promise<Session> {
    return this.api.sessions.get(sessionId);
  }

  /**
   * Follows the session until `done(view)`, within the scenario's time: each read is a long poll
   * (`GET /v1/sessions/{id}?wait=&after=`) that answers at the session's next change.
   */
  async until(sessionId: string, what: string, done: (view: Session) => boolean): Promise<Session> {
    let view = await this.get(sessionId);
    let shown = describe(view);
    while (!done(view)) {
      const left = this.deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; the session is ${describe(view)}`);
      view = await this.api.sessions.waitForChange(sessionId, {
        after: view.version,
        waitMs: Math.min(left, LONG_POLL_MS),
      });
      const now = describe(view);
      if (now !== shown) this.say(`${sessionId} ${now}`);
      shown = now;
    }
    return view;
  }

  /** The view once `has` holds or the session has ended: `view` itself when `has(view)` already holds. */
  async untilShown(view: Session, what: string, has: (view: Session) => boolean): Promise<Session> {
    return has(view) ? view : this.until(view.sessionId, what, (v) => has(v) || FINAL.has(v.phase));
  }

  checkDeadline(what: string): void {
    if (Date.now() > this.deadline) throw new Error(`timed out waiting for ${what}`);
  }

  async final(sessionId: string): Promise<Session> {
    return this.until(sessionId, 'the end of the session', (v) => FINAL.has(v.phase));
  }
}

function describe(view: Session): string {
  const status = view.providerStatus ? ` (${view.providerStatus})` : '';
  return `${view.kind ?? '?'}: ${view.phase ?? '?'}${status}${view.reason ? `, ${reasonText(view.reason)}` : ''}`;
}

const payment = (view: Session) => (view.operations ?? []).find((o) => o.kind === 'payment');

function expectPhase(view: Session, phase: Session['phase']): string {
  if (view.phase !== phase) throw new Error(`ended ${describe(view)}, expected ${phase}`);
  return phase;
}

/** The payer answers the 3-D Secure challenge over HTTP and follows the page back to the API. */
async function playThreeDs(s: Scenario, view: Session, code: string): Promise<string> {
  if (FINAL.has(view.phase)) throw new Error(`ended before the payer could act: ${describe(view)}`);
  const dest = view.userAction?.destination_info;
  if (!dest?.url_address)
    throw new Error(`no 3-D Secure redirect in userAction: ${JSON.stringify(view.userAction)}`);
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...dest.additional_params, ...dest.extra_params }))
    params[k] = String(v);
  s.say(`payer opens the 3-D Secure page (${dest.http_method ?? 'GET'} ${new URL(dest.url_address).origin})`);
  const challenge = await openPage(dest.url_address, dest.http_method === 'POST' ? 'POST' : 'GET', params);
  const form = firstForm(challenge.html, challenge.url);
  if (challenge.status !== 200 || !form)
    throw new Error(`the 3-D Secure page was not served (${challenge.status})`);
  s.say('payer types the code and confirms');
  const submitted = await openPage(form.action, form.method === 'GET' ? 'GET' : 'POST', {
    ...form.fields,
    code,
  });
  // Back to back_url: a redirect (GET) or an auto-submitted form (POST), as the issuer chooses.
  let back = submitted;
  if (submitted.location) back = await openPage(submitted.location, 'GET');
  else {
    const auto = firstForm(submitted.html, submitted.url);
    if (!auto) throw new Error(`the 3-D Secure page did not send the payer back (${submitted.status})`);
    back = await openPage(auto.action, auto.method === 'GET' ? 'GET' : 'POST', auto.fields);
  }
  const outcome = /data-outcome="([^"]+)"/.exec(back.html)?.[1] ?? `HTTP ${back.status}`;
  s.say(`payer lands on ${new URL(back.url).pathname}: ${outcome}`);
  return outcome;
}

/** The payer's bank pays the FPS QR (sandbox simulation route behind the QR's deep link). */
async function payQr(s: Scenario, view: Session): Promise<void> {
  if (FINAL.has(view.phase)) throw new Error(`ended before the payer could act: ${describe(view)}`);
  const content = view.userAction?.payment_qr?.qr_data?.qr_content;
  if (typeof content !== 'string') throw new Error(`no QR in userAction: ${JSON.stringify(view.userAction)}`);
  s.say('payer scans the QR and pays in the bank app');
  const res = await postJson(`${content}/pay`, { phone_number: FPS_PHONE });
  if (res.status !== 200)
    throw new Error(`the bank app refused to pay (${res.status}): ${res.text.slice(0, 200)}`);
}

async function awaitQr(s: Scenario, view: Session): Promise<Session> {
  return s.until(view.sessionId, 'the QR', (v) => !!v.userAction?.payment_qr || FINAL.has(v.phase));
}

type CardOptions = Partial<Omit<Extract<CheckoutInput, { method: 'card' }>, 'method' | 'amount' | 'card'>>;

/** A card checkout by the demo payer, named by the scenario's reference. */
async function cardCheckout(s: Scenario, amount: number, pan: string, extra: CardOptions = {}) {
  return s.created(
    await s.api.checkouts.create({
      method: 'card',
      reference: s.ref(),
      customer: CUSTOMER,
      amount: rub(amount),
      card: card(pan),
      ...extra,
    }),
  );
}

async function successfulCardPayment(s: Scenario, amount: number, extra: CardOptions = {}) {
  const view = await cardCheckout(s, amount, FRICTIONLESS, extra);
  const done = await s.final(view.sessionId);
  expectPhase(done, 'succeeded');
  return done;
}

type ScenarioFn = (s: Scenario, ctx: DemoContext, shared: Shared) => Promise<string>;

interface Shared {
  /** The recurring token the card checkout obtained (allowRecurring). */
  cardToken: Promise<string>;
  setCardToken(token: string): void;
  failCardToken(err: Error): void;
}

const SCENARIOS: Record<DemoKind, ScenarioFn> = {
  async card(s, _ctx, shared) {
    try {
      const done = await successfulCardPayment(s, 125_000, { allowRecurring: true });
      if (done.recurringToken) shared.setCardToken(done.recurringToken);
      else shared.failCardToken(new Error('the card checkout obtained no recurring token'));
      return `succeeded, ${payment(done)?.amount ?? '?'} charged${done.recurringToken ? ', recurring token' : ''}`;
    } catch (err) {
      shared.failCardToken(err as Error);
      throw err;
    }
  },

  async 'three-ds'(s) {
    // No backUrl: the API gives the provider this session's signed return page as back_url.
    const view = await cardCheckout(s, 89_900, THREE_DS);
    const waiting = await s.untilShown(view, 'the 3-D Secure redirect', (v) => !!v.userAction);
    const page = await playThreeDs(s, waiting, '12345');
    const done = await s.final(view.sessionId);
    return `${expectPhase(done, 'succeeded')}, return page: ${page}`;
  },

  async 'payment-form'(s, ctx) {
    const view = s.created(
      await s.api.checkouts.create({
        method: 'payment_form',
        reference: s.ref(),
        customer: CUSTOMER,
        amount: rub(42_000),
      }),
    );
    const ready = await s.untilShown(view, 'the public token', (v) => !!v.publicToken);
    if (!ready.publicToken) throw new Error(`no public token: ${describe(ready)}`);
    s.say('payer fills in the payment-form widget');
    const res = await postJson(`${ctx.sandboxUrl}/sandbox/widgets/payment-form`, {
      public_token: ready.publicToken,
      ...card(FRICTIONLESS),
    });
    if (res.status !== 200)
      throw new Error(`the widget refused the card (${res.status}): ${res.text.slice(0, 200)}`);
    return expectPhase(await s.final(view.sessionId), 'succeeded');
  },

  async fps(s) {
    const view = s.created(
      await s.api.checkouts.create({
        method: 'fps',
        reference: s.ref(),
        amount: rub(31_500),
        customer: CUSTOMER,
        moneyPurpose: 'paysaga demo',
      }),
    );
    await payQr(s, await awaitQr(s, view));
    return expectPhase(await s.final(view.sessionId), 'succeeded');
  },

  async 'fps-widget'(s, ctx) {
    // The provider's own FPS page shows the QR: paysaga makes the page's public token.
    const view = s.created(
      await s.api.checkouts.create({
        method: 'fps',
        reference: s.ref(),
        amount: rub(12_900),
        customer: CUSTOMER,
        widget: { lang: 'en' },
      }),
    );
    const ready = await s.untilShown(view, 'the public token', (v) => !!v.publicToken);
    if (!ready.publicToken) throw new Error(`no public token: ${describe(ready)}`);
    s.say(
      `payer opens the FPS page: ${ctx.sandboxUrl}/sandbox/widgets/fps?public_token=${ready.publicToken}`,
    );
    const res = await postJson(`${ctx.sandboxUrl}/sandbox/widgets/fps`, { public_token: ready.publicToken });
    if (res.status !== 200)
      throw new Error(`the FPS page refused (${res.status}): ${res.text.slice(0, 200)}`);
    await payQr(s, await awaitQr(s, view));
    return expectPhase(await s.final(view.sessionId), 'succeeded');
  },

  async hold(s, ctx) {
    const held = 200_000;
    const charged = 120_000;
    const view = await cardCheckout(s, held, FRICTIONLESS, {
      settings: { finalization: { mode: 'manual', deadlineMs: 10 * 60_000 } },
    });
    await s.until(
      view.sessionId,
      'the hold',
      (v) => v.phase === 'awaiting_finalization' || FINAL.has(v.phase),
    );
    expectPhase(await s.get(view.sessionId), 'awaiting_finalization');
    s.say(`funds held; finalizing ${charged} of ${held}`);
    const finalized = await s.api.sessions.finalize(view.sessionId, { amount: charged });
    s.say(`finalize answered: ${describe(finalized)}`);
    expectPhase(await s.final(view.sessionId), 'succeeded');
    // What the payer's card saw, from the sandbox's ledger: the part charged, the rest released.
    const ledger = await fetch(
      `${ctx.sandboxUrl}/sandbox/ledger?session_id=${encodeURIComponent(view.sessionId)}`,
    );
    const totals = ((await ledger.json()) as { totals?: Record<string, number> }).totals ?? {};
    if (totals.capture !== charged || totals.release !== held - charged)
      throw new Error(
        `ledger shows capture ${totals.capture}, release ${totals.release}; expected ${charged}, ${held - charged}`,
      );
    return `succeeded, held ${held}, charged ${charged}, released ${held - charged}`;
  },

  async refund(s) {
    const paid = await successfulCardPayment(s, 75_000);
    s.say(`refunding 25000 of ${payment(paid)?.amount ?? 75_000}`);
    const reference = s.ref('-r');
    const refund = await s.api.sessions.refund(paid.sessionId, { reference, amount: 25_000 });
    s.say(`refund taken: ${describe(refund)}`);
    const ended = (v: { refunds: { reference: string; status: string }[] }) =>
      v.refunds.find((r) => r.reference === reference && (r.status === 'succeeded' || r.status === 'failed'));
    const done = await s.until(paid.sessionId, 'the refund', (v) => !!ended(v));
    const status = ended(done)?.status;
    if (status !== 'succeeded') throw new Error(`refund ${reference} ${status}`);
    return `refund succeeded; session ${expectPhase(done, 'succeeded')}, refunded ${done.totals.refunded}`;
  },

  async payout(s) {
    const view = s.created(
      await s.api.payouts.create({
        reference: s.ref(),
        amount: rub(50_000),
        destination: { type: 'card', card: { card_number: FRICTIONLESS } },
      }),
    );
    return expectPhase(await s.final(view.sessionId), 'succeeded');
  },

  async payouts(s) {
    // Several payouts in one session: sent one at a time, each with its own decision and result.
    const [first, second, third] = ['-1', '-2', '-3'].map((suffix) => s.ref(suffix)) as [
      string,
      string,
      string,
    ];
    const view = s.created(
      await s.api.payouts.create({
        reference: s.ref(),
        settings: { approval: { mode: 'manual', deadlineMs: 10 * 60_000 } },
        payouts: [
          { reference: first, amount: rub(20_000), destination: FPS_ACCOUNT },
          { reference: second, amount: rub(15_000), destination: FPS_ACCOUNT },
        ],
      }),
    );
    const statusOf = (v: Session, reference: string) =>
      v.payouts?.find((p) => p.reference === reference)?.status;
    const awaiting = async (reference: string) => {
      const v = await s.until(
        view.sessionId,
        `payout ${reference} awaiting approval`,
        (x) => statusOf(x, reference) === 'awaiting_approval' || FINAL.has(x.phase),
      );
      if (statusOf(v, reference) !== 'awaiting_approval')
        throw new Error(`ended ${describe(v)} before ${reference}`);
    };
    await awaiting(first);
    await s.api.payouts.add(view.sessionId, {
      reference: third,
      amount: rub(7_500),
      destination: FPS_ACCOUNT,
    });
    s.say(`added payout ${third}; approving ${first}`);
    await s.api.sessions.approve(view.sessionId, { payout: first });
    await awaiting(second);
    s.say(`canceling ${second}`);
    await s.api.sessions.cancel(view.sessionId, { reason: 'demo: the wrong recipient', payout: second });
    await awaiting(third);
    s.say(`approving ${third}`);
    await s.api.sessions.approve(view.sessionId, { payout: third });
    const done = await s.final(view.sessionId);
    expectPhase(done, 'succeeded');
    return `succeeded: ${(done.payouts ?? []).map((p) => `${p.amount} ${p.status}`).join(', ')}`;
  },

  async 'identity-check'(s) {
    const view = s.created(
      await s.api.identityChecks.create({
        reference: s.ref(),
        phone: FPS_PHONE,
        bankId: SANDBOX_BANK,
        payee: { given_name: 'Ivan', family_name: 'Petrov' },
      }),
    );
    return `${expectPhase(await s.final(view.sessionId), 'succeeded')} (recipient registered in FPS)`;
  },

  async chargeback(s, ctx) {
    const paid = await successfulCardPayment(s, 64_000);
    s.say("the payer's bank files a chargeback");
    const res = await postJson(`${ctx.sandboxUrl}/sandbox/chargebacks`, { session_id: paid.sessionId });
    if (res.status !== 200)
      throw new Error(`the sandbox refused the chargeback (${res.status}): ${res.text.slice(0, 200)}`);
    const seen = await s.until(paid.sessionId, 'the chargeback on the session', (v) =>
      (v.operations ?? []).some((o) => o.kind === 'chargeback'),
    );
    const cb = seen.operations.find((o) => o.kind === 'chargeback')!;
    return `chargeback ${cb.id} ${cb.amount ?? ''} recorded (${seen.kind})`.replace('  ', ' ');
  },

  async 'fps-binding'(s) {
    const view = s.created(
      await s.api.fpsBindings.create({
        reference: s.ref(),
        customer: CUSTOMER,
      }),
    );
    await payQr(s, await awaitQr(s, view));
    const done = await s.final(view.sessionId);
    expectPhase(done, 'succeeded');
    if (!done.recurringToken) throw new Error('succeeded without a recurring token');
    return 'succeeded, FPS account bound (recurring token)';
  },

  async recurring(s, _ctx, shared) {
    s.say('waiting for the recurring token of the card checkout');
    const token = await shared.cardToken;
    const view = s.created(
      await s.api.checkouts.create({
        method: 'recurring',
        reference: s.ref(),
        customer: CUSTOMER,
        amount: rub(9_900),
        token,
        initiatedBy: 'merchant',
      }),
    );
    return `${expectPhase(await s.final(view.sessionId), 'succeeded')} (merchant-initiated, by token)`;
  },

  async subscription(s, ctx, shared) {
    s.say('waiting for the recurring token of the card checkout');
    const token = await shared.cardToken;
    // A calendar schedule, in seconds so the demo sees it bill (month, year, ... bill the same way).
    const created = await s.api.subscriptions.create({
      reference: s.ref(),
      token,
      amount: rub(4_990),
      schedule: { interval: 'second', count: 4 },
      customer: CUSTOMER,
    });
    const id = created.subscriptionId;
    s.track(id, created.links);
    const clock = (t: string) => t.slice(11, 19);
    s.say(
      `${id} created: ${created.status}, every 4 s from ${clock(created.schedule?.anchor ?? '')}; ` +
        `next due ${(created.nextDueDates ?? []).map(clock).join(', ')}`,
    );
    // A few periods charged (each its own payment session), then canceled so the stack stays quiet;
    // canceled on a failure too. A charge in flight is followed by long poll of its session; between
    // charges the wait is until the next one is due.
    const periods = ctx.subscriptionPeriods ?? 2;
    let view: Subscription = created;
    try {
      let shown = 0;
      while (view.totals.succeeded < periods) {
        if (view.status !== 'active' || view.totals.failed > 0)
          throw new Error(
            `subscription ${view.status}: ${JSON.stringify(view.totals)} ${view.dunning?.lastReason ? reasonText(view.dunning.lastReason) : ''}`,
          );
        s.checkDeadline(`${periods} charges of ${id}`);
        if (view.totals.succeeded > shown) {
          shown = view.totals.succeeded;
          s.say(`period ${shown} charged`);
        }
        const charging = view.charges.find((c) => c.outcome === 'pending' && c.sessionId);
        if (charging) await s.final(charging.sessionId);
        else {
          const due = view.nextChargeAt ? Date.parse(view.nextChargeAt) - Date.now() : 0;
          await sleep(Math.min(Math.max(due, 200), 5_000));
        }
        view = await s.api.subscriptions.get(id);
      }
    } catch (err) {
      await s.api.subscriptions.cancel(id, { reason: 'demo failed' }).catch(() => undefined);
      throw err;
    }
    s.say(`period ${periods} charged; canceling`);
    const canceled = await s.api.subscriptions.cancel(id, { reason: 'demo done' });
    if (canceled.status !== 'canceled') throw new Error(`cancel left it ${canceled.status}`);
    return `${view.totals.succeeded} periods charged (${view.totals.chargedAmount}), then canceled`;
  },
};

/** A run id for references: unique across runs against the same (persistent) Temporal server. */
export function demoRunId(): string {
  return `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

export async function runDemo(
  ctx: DemoContext,
  kinds: readonly DemoKind[] = DEMO_KINDS,
): Promise<DemoResult[]> {
  const run = demoRunId();
  let setCardToken: (t: string) => void = () => undefined;
  let failCardToken: (e: Error) => void = () => undefined;
  const cardToken = new Promise<string>((resolve, reject) => {
    setCardToken = resolve;
    failCardToken = reject;
  });
  cardToken.catch(() => undefined);
  const shared: Shared = { cardToken, setCardToken, failCardToken };
  if (!kinds.includes('card')) failCardToken(new Error('needs the card scenario (its recurring token)'));

  return Promise.all(
    kinds.map(async (kind): Promise<DemoResult> => {
      const started = Date.now();
      const s = new Scenario(kind, ctx, run);
      try {
        const outcome = await SCENARIOS[kind](s, ctx, shared);
        ctx.progress(kind, `done: ${outcome}`);
        return result(s, true, outcome, started);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        ctx.progress(kind, `FAILED: ${message}`);
        return result(s, false, message, started);
      }
    }),
  );
}

function result(s: Scenario, ok: boolean, outcome: string, started: number): DemoResult {
  return {
    kind: s.kind,
    ok,
    outcome,
    ms: Date.now() - started,
    ...(s.sessionId ? { sessionId: s.sessionId } : {}),
    ...(s.temporalUrl ? { temporalUrl: s.temporalUrl } : {}),
  };
}

/** The table `paysaga demo` prints (plain text, one line per kind). */
export function formatTable(results: DemoResult[]): string[] {
  const rows = results.map((r) => [
    r.kind,
    r.sessionId ?? '-',
    r.ok ? 'ok' : 'FAILED',
    r.outcome,
    r.temporalUrl ?? '-',
  ]);
  const head = ['KIND', 'SESSION', 'RESULT', 'OUTCOME', 'TEMPORAL UI'];
  const widths = head.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => Math.min(r[i]!.length, i === 3 ? 60 : 200))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) =>
        i === cells.length - 1
          ? c
          : (c.length > widths[i]! ? `${c.slice(0, widths[i]! - 1)}…` : c).padEnd(widths[i]!),
      )
      .join('  ');
  return [line(head), ...rows.map(line)];
}
