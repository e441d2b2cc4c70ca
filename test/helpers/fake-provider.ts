/**
 * A fake provider for workflow tests on the time-skipping server: paysaga's provider activities (and the
 * event publishing activity) in memory, each session a timeline of what transaction/state shows from
 * which moment on, in the server's (skipped) time. Decisions change the timeline; every call is recorded,
 * so a test can say what paysaga sent (e.g. that a deadline released a hold) without a sandbox.
 *
 *   const provider = new FakeProvider();
 *   provider.open(held('ps_1', 5_000), t0);                  // the provider waits for finalize
 *   provider.at('ps_1', t0 + HOUR, (s) => succeeded(s));     // and would succeed by itself later
 *   Worker.create({ ..., activities: provider.activities() })
 *
 * One worker can serve many tests: `bySession(providers)` hands each call to the provider registered
 * under the calling workflow's id (the session id).
 */
import { activityInfo } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ProofActivities, ProviderActivities } from '../../activities/types';
import type { EventPublishingActivities } from '../../activities/event-activities';
import type { StoreActivities } from '../../activities/store-activities';
import { providerRefused } from '../../common/failures';
import type { PaysagaEvent } from '../../common/events';
import type { Payment, SessionInfo, WebhookEvent } from '../../provider/schemas';

export type ProviderCall = keyof ProviderActivities;

export interface RecordedCall {
  name: ProviderCall;
  sessionId: string;
  /** Server time of the call (ms since the epoch). */
  atMs: number;
}

import { iso } from '../../workflows/iso';
/** The amount a start body asks for (its sum_info, typed loosely by the request schema). */
const sumOf = (body: { sum_info?: unknown }) => (body.sum_info as { sum?: number } | undefined)?.sum ?? 0;
const money = (amount: number) => ({ sum: amount, currency_code: 'rub' });

function payment(s: SessionInfo): Payment {
  const p = s.payments?.at(-1);
  if (!p) throw new Error(`fake provider: session ${s.id} has no payment`);
  return p;
}

const moneybackIds = (s: SessionInfo) =>
  (s.payments ?? []).flatMap((p) => (p.moneyback ?? []).map((m) => m.id));

/** The session with its latest operation (the latest payment, else the latest payout) changed. */
function withPayment(s: SessionInfo, session: Partial<SessionInfo>, change: object): SessionInfo {
  const { next_step: _step, ...rest } = s;
  const list = s.payments?.length ? 'payments' : 'payouts';
  const ops = (s[list] ?? []) as Payment[];
  const last = ops.at(-1);
  if (!last) throw new Error(`fake provider: session ${s.id} has no operation`);
  const { user_action: _action, ...op } = last;
  return { ...rest, ...session, [list]: [...ops.slice(0, -1), { ...op, ...change }] };
}

/** A session the provider opened, with nothing started on it yet. */
export const opened = (id: string): SessionInfo => ({ id, transaction_status: 'created' });

const pendingPayment = (id: string, amount: number): SessionInfo => ({
  id,
  transaction_status: 'pending',
  payments: [{ id: `pm_${id}`, transaction_status: 'pending', sum_info: money(amount) }],
});

/** approve_pending: the provider waits for the partner's approval (nothing held yet). */
export const awaitingApproval = (id: string, amount: number): SessionInfo => ({
  ...pendingPayment(id, amount),
  next_step: 'approve',
});

/** finalization_pending: the amount is held; the provider waits for finalize or cancel. */
export const held = (id: string, amount: number): SessionInfo => ({
  ...pendingPayment(id, amount),
  next_step: 'finalize',
});

/** The payer is on the 3-D Secure page: nobody can cancel now (spec rule 3). */
export const threeDs = (id: string, amount: number): SessionInfo => ({
  id,
  transaction_status: 'ongoing',
  payments: [
    {
      id: `pm_${id}`,
      transaction_status: 'ongoing',
      sum_info: money(amount),
      user_action: { type: 'redirect', destination_info: { url_address: 'https://acs.test/3ds' } },
    },
  ],
});

/** The provider is working on it (authorizing, capturing): no decision to make, nothing to cancel. */
export const processing = (s: SessionInfo): SessionInfo =>
  withPayment(s, { transaction_status: 'ongoing' }, { transaction_status: 'ongoing' });

export const succeeded = (s: SessionInfo): SessionInfo =>
  withPayment(s, { transaction_status: 'completed' }, { transaction_status: 'successful' });

/** The operation ended unsuccessful with `code` (canceled_by_partner for the partner's own cancel). */
export const failed = (s: SessionInfo, code: string): SessionInfo =>
  withPayment(
    s,
    { transaction_status: 'canceled', error: { error_code: 'session_cancelled' } },
    { transaction_status: 'unsuccessful', error: { error_code: code } },
  );

/** A payout the provider holds for the partner's approval (start/transfer's answer). */
export const payoutAwaitingApproval = (id: string, amount: number): SessionInfo => ({
  id,
  transaction_status: 'pending',
  next_step: 'approve',
  payouts: [{ id: `po_${id}`, transaction_status: 'pending', sum_info: money(amount) }],
});

/** An FPS payment whose QR the payer is to scan (start/checkout's answer); `n` > 0 is a renewal. */
export const fpsQr = (s: SessionInfo, amount: number, n = 0): SessionInfo => ({
  ...s,
  transaction_status: 'ongoing',
  payments: [
    ...(s.payments ?? []),
    {
      id: `pm_${s.id}_${n}`,
      transaction_status: 'ongoing',
      sum_info: money(amount),
      user_action: { type: 'qr', qr_image: 'data:image/png;base64,AA==' },
    },
  ],
});

/** A completed refund of the payment (a moneyback record), as transaction/refund leaves it. */
export const refunded = (s: SessionInfo, id: string, amount: number): SessionInfo => {
  const p = payment(s);
  const moneyback = [
    ...(p.moneyback ?? []),
    { id, transaction_status: 'completed', sum_info: money(amount) },
  ];
  return { ...s, payments: [{ ...p, moneyback }] };
};

/** A point a fake activity waits at, in real time, until the test releases it. */
class Hold {
  private arrived!: () => void;
  private open!: () => void;
  /** Resolves once the activity waits here. */
  readonly reached = new Promise<void>((r) => (this.arrived = r));
  private readonly released = new Promise<void>((r) => (this.open = r));
  readonly release = (): void => this.open();

  /** The activity's side: says it is here, then waits for the release. */
  async pass(): Promise<void> {
    this.arrived();
    await this.released;
  }
}

export class FakeProvider {
  readonly calls: RecordedCall[] = [];
  readonly events: PaysagaEvent[] = [];
  /** transaction/refund answers 503 (retryable, nothing done) until this server time. */
  refundsDownUntil = 0;
  /** How long (real milliseconds) each write of the session's record takes: a store of random speed. */
  recordDelayMs: () => number = () => 0;
  /** Writes of the record begun and not finished. */
  writesUnderWay = 0;
  /** Each write of the session's record as it began: the version written and its phase. */
  readonly writes: { version: number; phase: string }[] = [];
  /** How long (real milliseconds) each provider call takes before it is answered. */
  callDelayMs = 0;
  /** Provider calls begun and not answered. */
  private callsUnderWay = 0;
  /** Writes of the record begun while a provider call was under way. */
  writesDuringCalls = 0;
  private heldVerdict?: Hold;
  private readonly heldEvents = new Map<string, Hold>();

  /**
   * The next publication of an event of `type` waits (in real time, so the server's time stands still)
   * until `release()`; `reached` resolves once it waits. For a moment when a run is handing events over.
   */
  holdEvent(type: string): { reached: Promise<void>; release: () => void } {
    const hold = new Hold();
    this.heldEvents.set(type, hold);
    return hold;
  }
  /**
   * The next webhook verification waits (in real time) until `release()`; `reached` resolves once it
   * waits. Verifications stand for the worker's (activities/proof-activities.ts): a body is believed.
   */
  holdVerdict(): { reached: Promise<void>; release: () => void } {
    this.heldVerdict = new Hold();
    return this.heldVerdict;
  }
  private readonly timelines = new Map<string, { fromMs: number; info: SessionInfo }[]>();

  /** What each session was opened for (transaction/initiate's sum): a start without a sum takes it. */
  private readonly opening = new Map<string, number>();

  /** The session exists from `fromMs` on, showing `info`; `amount` is what initiate asked for. */
  open(info: SessionInfo, fromMs: number, amount?: number): void {
    this.timelines.set(info.id, [{ fromMs, info: { ...info, updated_at: iso(fromMs) } }]);
    if (amount !== undefined) this.opening.set(info.id, amount);
  }

  /** From `fromMs` on, the provider shows `change` of what it showed just before. */
  at(id: string, fromMs: number, change: (s: SessionInfo) => SessionInfo): void {
    const line = this.timeline(id);
    const before = this.stateAt(id, fromMs);
    line.push({ fromMs, info: { ...change(before), updated_at: iso(fromMs) } });
    line.sort((a, b) => a.fromMs - b.fromMs);
  }

  stateAt(id: string, ms: number): SessionInfo {
    const line = this.timeline(id);
    const current = [...line].reverse().find((e) => e.fromMs <= ms) ?? line[0]!;
    return structuredClone(current.info);
  }

  /** How often paysaga made `name` calls (any session). */
  count(name: ProviderCall): number {
    return this.calls.filter((c) => c.name === name).length;
  }

  private timeline(id: string) {
    const line = this.timelines.get(id);
    if (!line) throw new Error(`fake provider: no session ${id}`);
    return line;
  }

  /** The activities of a paysaga worker, answering from the timelines at the server's time. */
  activities(): ProviderActivities & ProofActivities & EventPublishingActivities & StoreActivities {
    const now = () => activityInfo().currentAttemptScheduledTimestampMs;
    const record = (name: ProviderCall, sessionId: string) => {
      const atMs = now();
      this.calls.push({ name, sessionId, atMs });
      return atMs;
    };
    /** A decision the provider accepts only while it waits for it (next_step), like the real one. */
    const decide = (
      name: ProviderCall,
      sessionId: string,
      waitingFor: string[],
      then: (s: SessionInfo) => SessionInfo,
    ): SessionInfo => {
      const atMs = record(name, sessionId);
      const current = this.stateAt(sessionId, atMs);
      if (!waitingFor.includes(current.next_step ?? ''))
        throw providerRefused({
          endpoint: `transaction/${name}`,
          errorCode: 'invalid_request',
          description: `session_id.not_awaiting_${waitingFor.join('_or_')}`,
        });
      this.at(sessionId, atMs, then);
      return this.stateAt(sessionId, atMs);
    };
    const publish = async (event: PaysagaEvent) => {
      const held = this.heldEvents.get(event.type);
      this.heldEvents.delete(event.type);
      await held?.pass();
      if (!this.events.some((e) => e.id === event.id)) this.events.push(event);
    };
    const notHere = (name: string) => async (): Promise<never> => {
      throw ApplicationFailure.nonRetryable(`fake provider: ${name} is not part of this test`);
    };
    return this.slowed<ProviderActivities & ProofActivities & EventPublishingActivities & StoreActivities>({
      getState: async ({ sessionId }) => this.stateAt(sessionId, record('getState', sessionId)),
      approve: async ({ sessionId }) => decide('approve', sessionId, ['approve'], (s) => processing(s)),
      cancel: async ({ sessionId }) =>
        decide('cancel', sessionId, ['approve', 'finalize'], (s) => failed(s, 'canceled_by_partner')),
      finalize: async ({ sessionId }) => decide('finalize', sessionId, ['finalize'], (s) => succeeded(s)),
      // FPS: a new payment with its QR each time (a renewal after qr_expired is start n > 0).
      startCheckout: async ({ sessionId, body, n }) => {
        const atMs = record('startCheckout', sessionId);
        if (!this.stateAt(sessionId, atMs).payments?.some((p) => p.id === `pm_${sessionId}_${n}`))
          this.at(sessionId, atMs, (s) => fpsQr(s, sumOf(body) || (this.opening.get(sessionId) ?? 0), n));
        return this.stateAt(sessionId, atMs);
      },
      // A payout waits for the partner's approval, like the sandbox's.
      startTransfer: async ({ sessionId, body }) => {
        const atMs = record('startTransfer', sessionId);
        if (!this.stateAt(sessionId, atMs).payouts?.length)
          this.at(sessionId, atMs, () => payoutAwaitingApproval(sessionId, sumOf(body)));
        return this.stateAt(sessionId, atMs);
      },
      startPayout: notHere('start/transfer of one of several payouts'),
      // Completed at once; the key is the reference, so a resend of the same refund is the same refund.
      refund: async ({ sessionId, reference, amount }) => {
        const atMs = record('refund', sessionId);
        if (atMs < this.refundsDownUntil)
          throw ApplicationFailure.retryable('transaction/refund: http_503', 'ProviderUnavailable');
        const id = `rf_${reference}`;
        if (!moneybackIds(this.stateAt(sessionId, atMs)).includes(id))
          this.at(sessionId, atMs, (s) => refunded(s, id, amount.amount));
        return this.stateAt(sessionId, atMs);
      },
      createPaymentFormToken: notHere('public_token'),
      createFpsWidgetToken: notHere('public_token'),
      publishEvent: async (event: PaysagaEvent) => publish(event),
      // The worker's check of a webhook, believed here (see holdVerdict).
      verifyProviderEvent: async ({ body }) => {
        const held = this.heldVerdict;
        this.heldVerdict = undefined;
        await held?.pass();
        return { ok: true as const, event: JSON.parse(body) as WebhookEvent };
      },
      // The session's record: its events are what the test watches (the store itself is not faked).
      recordSession: async (record) => {
        this.writes.push({ version: record.state.version, phase: record.summary.phase });
        if (this.callsUnderWay > 0) this.writesDuringCalls++;
        this.writesUnderWay++;
        try {
          const delay = this.recordDelayMs();
          if (delay > 0) await new Promise((r) => setTimeout(r, delay));
          for (const event of record.events) await publish(event);
          return { applied: true, eventsAdded: record.events.length };
        } finally {
          this.writesUnderWay--;
        }
      },
      recordSubscription: async (record) => {
        for (const event of record.events) await publish(event);
        return { applied: true, eventsAdded: record.events.length };
      },
    });
  }

  /** The provider's calls, each answered after `callDelayMs` (and counted while under way). */
  private slowed<T extends object>(acts: T): T {
    const calls = ['getState', 'approve', 'cancel', 'finalize', 'startCheckout', 'startTransfer', 'refund'];
    const out = { ...acts } as Record<string, unknown>;
    for (const name of calls) {
      const call = (acts as Record<string, unknown>)[name] as (...a: unknown[]) => Promise<unknown>;
      out[name] = async (...args: unknown[]) => {
        this.callsUnderWay++;
        try {
          if (this.callDelayMs > 0) await new Promise((r) => setTimeout(r, this.callDelayMs));
          return await call(...args);
        } finally {
          this.callsUnderWay--;
        }
      };
    }
    return out as T;
  }
}

export type FakeActivities = ReturnType<FakeProvider['activities']>;

/**
 * Activities that hand each call to `providers.get(<the calling workflow's id>)`, so that one worker (its
 * bundle loaded once) serves every test of a file, each session with its own fake provider.
 */
export function bySession(providers: Map<string, FakeProvider>): FakeActivities {
  const names = Object.keys(new FakeProvider().activities()) as (keyof FakeActivities)[];
  const route =
    (name: keyof FakeActivities) =>
    async (...args: unknown[]): Promise<unknown> => {
      const id = activityInfo().workflowExecution?.workflowId ?? '(no workflow)';
      const provider = providers.get(id);
      if (!provider) throw ApplicationFailure.nonRetryable(`fake provider: no provider for session ${id}`);
      return (provider.activities()[name] as (...a: unknown[]) => Promise<unknown>)(...args);
    };
  return Object.fromEntries(names.map((name) => [name, route(name)])) as unknown as FakeActivities;
}
