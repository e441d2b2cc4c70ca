/**
 * The deadline paths of a session, fast: the real workflow bundle on Temporal's time-skipping test server
 * (test/helpers/time-skipping.ts) with a fake provider (test/helpers/fake-provider.ts), so that deadlines
 * of minutes, hours and days pass in moments and a test states what paysaga sent. Beside the real-stack
 * tests, which show the same rules against the sandbox in real time.
 *
 * Times below are the server's (skipped) time, read from the session's own records and the fake's call
 * log; nothing here measures the wall clock.
 */
import { randomUUID } from 'node:crypto';
import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  type Client,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { failureOf } from '../../common/failures';
import { reason, reasonText } from '../../common/reasons';
import { claimStartUpdate, refundUpdate, sessionQuery } from '../../common/messages';
import { updateOutlivedRun } from '../../platform/session-runs';
import type { SessionInput, SessionState, StartSpec } from '../../common/session-input';
import { DEFAULT_SETTINGS, mergeSettings, type SettingsOverrides } from '../../common/settings';
import type { SessionInfo } from '../../provider/schemas';
import type { checkoutWorkflow } from '../../workflows/checkout';
import {
  awaitingApproval,
  failed,
  FakeProvider,
  held,
  opened,
  processing,
  succeeded,
  threeDs,
} from '../helpers/fake-provider';
import { useFakeProviderWorker } from '../helpers/fake-provider-worker';

jest.setTimeout(150_000);

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Each session's fake provider, by session id: one worker (the bundle loaded once) serves every test. */
const fx = useFakeProviderWorker('deadlines');
const { providers, taskQueue } = fx;

/**
 * Polls at most every 10 minutes where the poll rate is not what a test is about: the deadlines and
 * results are the same, with fewer round trips through the worker.
 */
const fewPolls = { polling: { maxMs: 10 * MINUTE } } as const;

interface Run {
  client: Client;
  provider: FakeProvider;
  /** The server's time when the test began (the provider's timeline starts there). */
  t0: number;
  start(
    sessionId: string,
    o: { settings: SettingsOverrides; start?: StartSpec; continueAsNewAfter?: number },
  ): Promise<WorkflowHandleWithFirstExecutionRunId<typeof checkoutWorkflow>>;
}

/**
 * A session with its own fake provider on the shared worker, for `fn`. The session opens with the
 * provider's state `initial`, for `amount` (what the partner asked).
 */
async function withSession<T>(
  initial: (sessionId: string) => SessionInfo,
  amount: number,
  fn: (run: Run, sessionId: string) => Promise<T>,
): Promise<T> {
  const provider = new FakeProvider();
  const sessionId = `ps_${randomUUID().slice(0, 8)}`;
  const t0 = await fx.env.currentTimeMs();
  provider.open(initial(sessionId), t0);
  providers.set(sessionId, provider);
  const run: Run = {
    client: fx.env.client,
    provider,
    t0,
    start: (id, o) => {
      const input: SessionInput = {
        sessionId: id,
        kind: 'card_checkout',
        reference: `deadline-${id}`,
        request: { money: { amount, currency: 'rub' } },
        start: o.start ?? { by: 'provider' },
        settings: mergeSettings(DEFAULT_SETTINGS, o.settings),
        initialSnapshot: provider.stateAt(id, t0),
        ...(o.continueAsNewAfter ? { continueAsNewAfter: o.continueAsNewAfter } : {}),
      };
      return fx.env.client.workflow.start<typeof checkoutWorkflow>('checkoutWorkflow', {
        workflowId: id,
        taskQueue,
        args: [input],
      });
    },
  };
  try {
    return await fn(run, sessionId);
  } finally {
    providers.delete(sessionId);
  }
}

/**
 * The session's result: the state its workflow completes with once it stops following it. Bounded in
 * real time, so that a workflow that never completes fails its test (and stops its worker) by itself.
 */
async function result(h: WorkflowHandle<typeof checkoutWorkflow>): Promise<SessionState> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`workflow ${h.workflowId} did not complete`)), 120_000);
  });
  try {
    return await Promise.race([h.result(), stuck]);
  } finally {
    clearTimeout(timer);
  }
}

const atOf = (iso: string) => Date.parse(iso);
const eventTypes = (s: SessionState) => s.events.map((e) => e.type);

describe('decision deadlines: paysaga cancels what waits for the partner', () => {
  it.each([
    ['approve', awaitingApproval, { approval: { mode: 'manual', deadlineMs: 30 * MINUTE } }],
    ['finalize', held, { finalization: { mode: 'manual', deadlineMs: 30 * MINUTE } }],
  ] as const)(
    'no %s decision within the deadline: canceled at the provider (a hold is released), reason decision_deadline',
    async (decision, initial, settings) =>
      withSession(
        (id) => initial(id, 5_000),
        5_000,
        async ({ start, provider, t0 }, id) => {
          const state = await result(
            await start(id, { settings: { ...settings, ...fewPolls, followMs: HOUR } }),
          );
          expect(state.final).toMatchObject({
            phase: 'canceled',
            reason: { code: 'decision_deadline', detail: `no ${decision} decision in time` },
          });
          const cancels = provider.calls.filter((c) => c.name === 'cancel');
          expect(cancels).toHaveLength(1);
          expect(cancels[0]!.atMs - t0).toBeGreaterThanOrEqual(30 * MINUTE);
          expect(provider.count(decision)).toBe(0);
          // The provider released it: its state shows the partner's cancel.
          expect(state.snapshot?.payments?.[0]).toMatchObject({
            transaction_status: 'unsuccessful',
            error: { error_code: 'canceled_by_partner' },
          });
        },
      ),
  );
});

describe("the payer's deadline", () => {
  it("passes while 3-D Secure is open: not canceled (nobody can cancel then), followed to the provider's end", async () =>
    withSession(
      (id) => threeDs(id, 3_000),
      3_000,
      async ({ start, provider, t0 }, id) => {
        // The provider ends the challenge itself, well after the payer's time ran out.
        provider.at(id, t0 + 40 * MINUTE, (s) => failed(s, 'three_ds_timeout'));
        const state = await result(
          await start(id, {
            settings: { deadlines: { payerActionMs: 15 * MINUTE }, ...fewPolls, followMs: HOUR },
          }),
        );
        expect(state.final).toMatchObject({
          phase: 'failed',
          reason: { code: 'provider_error', providerCode: 'three_ds_timeout' },
        });
        expect(atOf(state.final!.at) - t0).toBeGreaterThanOrEqual(40 * MINUTE);
        const deadline = state.events.find((e) => e.type === 'payer_action_deadline');
        expect(deadline).toBeDefined();
        expect(atOf(deadline!.at) - t0).toBeGreaterThanOrEqual(15 * MINUTE);
        expect(atOf(deadline!.at) - t0).toBeLessThan(40 * MINUTE);
        expect(provider.count('cancel')).toBe(0);
      },
    ));
});

describe('the session deadline', () => {
  it("passes while the provider is still processing: needs_attention (not final), then the provider's result", async () =>
    withSession(
      (id) => processing(awaitingApproval(id, 7_000)),
      7_000,
      async ({ start, provider, t0 }, id) => {
        provider.at(id, t0 + 3 * HOUR, succeeded);
        const state = await result(
          await start(id, { settings: { deadlines: { sessionMs: HOUR }, ...fewPolls, followMs: HOUR } }),
        );
        expect(state.final?.phase).toBe('succeeded');
        expect(state.attention).toBeUndefined();
        const types = eventTypes(state);
        const noted = state.events.find((e) => e.type === 'needs_attention');
        const unfinished = "the provider's operation is still ongoing; following it until it ends";
        expect(noted?.detail).toBe(reasonText(reason('session_deadline', unfinished)));
        expect(atOf(noted!.at) - t0).toBeGreaterThanOrEqual(HOUR);
        expect(types.indexOf('needs_attention')).toBeLessThan(types.indexOf('final'));
        expect(atOf(state.final!.at) - t0).toBeGreaterThanOrEqual(3 * HOUR);
        // Nothing could be canceled while the provider processed it; nothing was.
        expect(provider.count('cancel')).toBe(0);
      },
    ));
});

describe('the start deadline', () => {
  it('the starter never sends card data: canceled (not_started); a claim of the start is refused afterwards', async () =>
    withSession(opened, 1_000, async ({ start, client }, id) => {
      const handle = await start(id, {
        start: { by: 'starter' },
        settings: { deadlines: { startMs: 5 * MINUTE }, followMs: DAY },
      });
      await fx.env.sleep(10 * MINUTE);
      // The skipped timers' workflow tasks may still be running: wait for the result by query.
      let view = await handle.query(sessionQuery);
      for (let i = 0; !view.final && i < 100; i++) {
        await new Promise((r) => setTimeout(r, 50));
        view = await handle.query(sessionQuery);
      }
      expect(view).toMatchObject({
        phase: 'canceled',
        final: true,
        reason: { code: 'not_started', detail: 'card data was never submitted' },
      });
      const claim = await client.workflow
        .getHandle(id)
        .executeUpdate(claimStartUpdate)
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(claim).toBeInstanceOf(WorkflowUpdateFailedError);
      expect(failureOf((claim as WorkflowUpdateFailedError).cause)?.details).toMatchObject({
        code: 'start_not_open',
        phase: 'canceled',
      });
      const state = await result(handle);
      expect(state.final?.phase).toBe('canceled');
    }));
});

describe('the follow window', () => {
  it('ends: the workflow completes with the session as its result, having re-read the provider meanwhile', async () =>
    withSession(
      (id) => succeeded(awaitingApproval(id, 2_000)),
      2_000,
      async ({ start, provider, t0 }, id) => {
        const state = await result(await start(id, { settings: { followMs: 3 * DAY, recheckMs: DAY } }));
        expect(state.final?.phase).toBe('succeeded');
        expect(state.followUntil! - t0).toBeGreaterThanOrEqual(3 * DAY);
        expect((await fx.env.currentTimeMs()) - t0).toBeGreaterThanOrEqual(3 * DAY);
        // A re-read about every recheckMs while following (webhooks may be off).
        const rereads = provider.calls.filter((c) => c.name === 'getState' && c.atMs - t0 >= DAY);
        expect(rereads.length).toBeGreaterThanOrEqual(2);
        expect(rereads.length).toBeLessThanOrEqual(4);
      },
    ));
});

describe('continue-as-new', () => {
  it('during a long wait for the partner: the session goes on in new runs carrying its events, and ends right', async () =>
    withSession(
      (id) => awaitingApproval(id, 4_000),
      4_000,
      async ({ start, provider }, id) => {
        const handle = await start(id, {
          settings: {
            approval: { mode: 'manual', deadlineMs: 2 * DAY },
            // Hourly polls while waiting: two days of them outgrow the limit below several times.
            polling: { lateAfterMs: HOUR, initialMs: HOUR, maxMs: HOUR },
            followMs: HOUR,
          },
          continueAsNewAfter: 80,
        });
        const state = await result(handle);
        expect(state.final).toMatchObject({
          phase: 'canceled',
          reason: { code: 'decision_deadline', detail: 'no approve decision in time' },
        });
        expect(state.runs).toBeGreaterThanOrEqual(2);
        const types = eventTypes(state);
        expect(types[0]).toBe('created');
        expect(types.filter((t) => t === 'continue_as_new').length).toBe(state.runs);
        expect(provider.count('cancel')).toBe(1);
        const first = await fx.env.client.workflow.getHandle(id, handle.firstExecutionRunId).describe();
        expect(first.status.name).toBe('CONTINUED_AS_NEW');
      },
    ));
});

describe('FPS payment with QR renewals', () => {
  // Found by the reliability suite: with renewals allowed, an expired QR read as "a renewal is coming"
  // even once no renewal could come (the payer's part over), so a session the provider had ended
  // (canceled, payment unsuccessful: qr_expired) stayed needs_attention forever.
  it('a QR that expires when no renewal will follow ends the session failed (qr_expired), not needs_attention', async () =>
    withSession(
      (id) => threeDs(id, 2_000),
      2_000,
      async ({ provider, t0 }, id) => {
        provider.at(id, t0 + 20 * MINUTE, (s) => failed(s, 'qr_expired'));
        const input: SessionInput = {
          sessionId: id,
          kind: 'fps_payment',
          reference: `fps-${id}`,
          request: { money: { amount: 2_000, currency: 'rub' } },
          // Opened by the provider's start (no renewal possible: paysaga did not start the payment).
          start: { by: 'provider' },
          qrRenewals: 2,
          settings: mergeSettings(DEFAULT_SETTINGS, {
            deadlines: { sessionMs: 30 * MINUTE },
            ...fewPolls,
            followMs: HOUR,
          }),
          initialSnapshot: provider.stateAt(id, t0),
        };
        const handle = await fx.env.client.workflow.start('fpsPaymentWorkflow', {
          workflowId: id,
          taskQueue,
          args: [input],
        });
        const state = await result(handle);
        expect(state.final).toMatchObject({ phase: 'failed' });
        expect(state.final!.reason).toEqual({ code: 'provider_error', providerCode: 'qr_expired' });
        expect(eventTypes(state)).not.toContain('needs_attention');
        expect(provider.count('startCheckout')).toBe(0);
      },
    ));
});

describe('refunds the run itself must send, while it would end or continue as new', () => {
  // Found by the reliability suite: a refund Update waits for the workflow's own loop to send it, and
  // that loop, its history over the limit, waited for every handler to finish before continuing as new:
  // each waited for the other forever (the refund stayed `requested`, the partner's calls timed out).
  it.each([
    ['half an hour', 30 * MINUTE, 80, 'sent first, then the run continues as new'],
    [
      'two hours',
      2 * HOUR,
      10,
      'the run continues as new meanwhile (twice the limit); the next run sends them',
    ],
  ])(
    'an outage of %s: two concurrent refunds are both carried out, once each (%#: %s)',
    async (_name, outageMs, continueAsNewAfter) =>
      withSession(
        (id) => succeeded(awaitingApproval(id, 5_000)),
        5_000,
        async ({ start, provider, t0 }, id) => {
          const handle = await start(id, {
            settings: { ...fewPolls, followMs: 3 * DAY, recheckMs: DAY },
            continueAsNewAfter,
          });
          const session = fx.env.client.workflow.getHandle(id);
          for (let tries = 0; (await session.query(sessionQuery)).phase !== 'succeeded'; tries++)
            if (tries > 100) throw new Error('the session never succeeded');
          provider.refundsDownUntil = t0 + outageMs;
          // Both accepted now, in this order (the second takes the rest), and waiting together: no time
          // passes until the time-skipping server runs the outage out.
          const updates = [];
          for (const arg of [{ reference: 'rf-one', amount: 1_000 }, { reference: 'rf-rest' }])
            updates.push(
              await session.startUpdate(refundUpdate, {
                args: [arg],
                waitForStage: WorkflowUpdateStage.ACCEPTED,
              }),
            );
          const state = await result(handle);
          expect(state.refunds.map((r) => [r.reference, r.amount, r.status])).toEqual([
            ['rf-one', 1_000, 'succeeded'],
            ['rf-rest', 4_000, 'succeeded'],
          ]);
          // The provider made each refund once, after the outage.
          const refunds = state.snapshot?.payments?.[0]?.moneyback ?? [];
          expect(refunds.map((m) => [m.id, m.sum_info?.sum])).toEqual([
            ['rf_rf-one', 1_000],
            ['rf_rf-rest', 4_000],
          ]);
          expect(provider.calls.some((c) => c.name === 'refund' && c.atMs < provider.refundsDownUntil)).toBe(
            true,
          );
          const types = eventTypes(state);
          const sent = types.indexOf('refund_processing');
          const continued = types.indexOf('continue_as_new', types.indexOf('refund_requested'));
          expect(continued).toBeGreaterThan(0);
          if (continueAsNewAfter > 10) {
            // Within twice the limit the refunds go first; their Updates answer with them.
            expect(continued).toBeGreaterThan(types.lastIndexOf('refund_processing'));
            for (const u of updates) expect((await u.result()).created).toBe(true);
          } else {
            // The run did not wait for them; the Updates ended with it: the server answers them as
            // outlived, or (read later, as here) their run as gone. The client asks again either way.
            expect(continued).toBeLessThan(sent);
            for (const u of updates) {
              const err = await u.result().then(
                () => undefined,
                (e: unknown) => e,
              );
              expect(err instanceof WorkflowNotFoundError || updateOutlivedRun(err)).toBe(true);
            }
          }
        },
      ),
  );

  // Found by the reliability suite: a refund asked for while a run that was done following the session
  // handed its last events over was accepted, and the run then waited for that Update forever.
  it('a refund accepted while the run ends (handing its events over) is carried out, not waited for', async () =>
    withSession(
      (id) => succeeded(awaitingApproval(id, 5_000)),
      5_000,
      async ({ start, provider, t0 }, id) => {
        // The first refund succeeds only after the follow window: the run ends right after announcing it.
        const handle = await start(id, { settings: { ...fewPolls, followMs: HOUR, recheckMs: HOUR } });
        const session = fx.env.client.workflow.getHandle(id);
        for (let tries = 0; (await session.query(sessionQuery)).phase !== 'succeeded'; tries++)
          if (tries > 100) throw new Error('the session never succeeded');
        provider.refundsDownUntil = t0 + 2 * HOUR;
        const ending = provider.holdEvent('session.refunded');
        const first = await session.startUpdate(refundUpdate, {
          args: [{ reference: 'rf-first', amount: 1_000 }],
          waitForStage: WorkflowUpdateStage.ACCEPTED,
        });
        const done = result(handle);
        await ending.reached;
        const second = await session.startUpdate(refundUpdate, {
          args: [{ reference: 'rf-second' }],
          waitForStage: WorkflowUpdateStage.ACCEPTED,
        });
        ending.release();
        const state = await done;
        expect((await first.result()).created).toBe(true);
        expect((await second.result()).created).toBe(true);
        expect(state.refunds.map((r) => [r.reference, r.amount, r.status])).toEqual([
          ['rf-first', 1_000, 'succeeded'],
          ['rf-second', 4_000, 'succeeded'],
        ]);
        expect((state.snapshot?.payments?.[0]?.moneyback ?? []).map((m) => m.id)).toEqual([
          'rf_rf-first',
          'rf_rf-second',
        ]);
      },
    ));
});
