/**
 * Looking never hurts (docs/decisions/018-looking-never-hurts.md). Sessions of every kind run under
 * load on a real dev server, sandbox and worker, while operators open every running workflow the way
 * the Temporal UI does (describe, history, `__temporal_workflow_metadata`, `__stack_trace`,
 * `__enhanced_stack_trace`, paysaga's own query), over and over. The worker's cache is small, so
 * workflows are evicted and replayed all the time, and the worker is restarted mid-flight (its cache
 * dropped). Then every session ends as the provider says, the sandbox's ledger shows each movement once,
 * and every history the task queues hold replays against the built bundle.
 *
 * The mix comes from a seed, printed (LOOK_SEED=<seed> repeats it): which kinds, in which order, the
 * payer's and the partner's delays, and when the worker restarts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionView } from '../../common/views';
import { phaseOf } from '../../common/snapshot';
import { Draws, newSeed } from '../reliability/draws';
import { finalView, viewUntil } from '../helpers/final';
import { Operator, replayAll, type Looked, type Replayed } from '../helpers/operator';
import { completeThreeDs, payFpsQr } from '../helpers/payer';
import { startStack, type TestStack } from '../helpers/stack';
import { sharedWorkflowBundlePath } from '../helpers/temporal';
import { until } from '../helpers/until';
import { card, FRICTIONLESS, references, rub, startFpsPayoutBatch, THREE_DS } from '../helpers/workflow-test';
import { TEST_CARD } from '../../sandbox/test-cards';
import { ensureReconciler } from '../../client/reconciler';

const seed = process.env.LOOK_SEED || newSeed();

/** The 1-based line of the first line of `file` (from the repository's root) that contains `text`. */
function lineOf(file: string, text: string): number {
  const lines = fs.readFileSync(path.join(__dirname, '..', '..', file), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(text));
  if (i < 0) throw new Error(`${file} has no line with ${text}`);
  return i + 1;
}

/** The lines of the function that starts at `text`, up to its closing brace at the start of a line. */
function linesOf(file: string, text: string): { from: number; to: number } {
  const from = lineOf(file, text);
  const lines = fs.readFileSync(path.join(__dirname, '..', '..', file), 'utf8').split('\n');
  const end = lines.findIndex((l, i) => i >= from && l === '}');
  return { from, to: end + 1 };
}
const draws = new Draws(seed);
const SESSIONS = 44;
const IN_FLIGHT = 12;
const ref = references('look');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** How long one session may take from start to its end, on a loaded machine, before the test says where it stuck. */
const SESSION_BOUND_MS = 4 * 60_000;

/** `work`, or a failure naming where it stood (`where()`) if it is not done within `ms`. */
async function bounded<T>(work: Promise<T>, ms: number, where: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not done within ${ms} ms, at ${where()}`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

jest.setTimeout(15 * 60_000);

type Kind =
  | 'card'
  | 'three_ds'
  | 'hold_finalize'
  | 'fps'
  | 'fps_binding'
  | 'payment_form'
  | 'payout'
  | 'payout_batch'
  | 'refund'
  | 'chargeback'
  | 'identity_check';
const KINDS: Kind[] = [
  'card',
  'three_ds',
  'hold_finalize',
  'fps',
  'fps_binding',
  'payment_form',
  'payout',
  'payout_batch',
  'refund',
  'chargeback',
  'identity_check',
];

describe(`looking never hurts (seed ${seed}; LOOK_SEED=${seed} repeats it)`, () => {
  let stack: TestStack;
  let holds: TestStack;
  let filter: string;
  beforeAll(async () => {
    process.stderr.write(`[looking] seed ${seed} (LOOK_SEED=${seed} repeats this run)\n`);
    // The payer's QR and 3-D Secure page live long enough for a payer slowed down by a loaded machine
    // (the sandbox's clock runs a hundred times faster than the real one).
    const common = {
      webhooks: true,
      maxCachedWorkflows: 6,
      settings: { followMs: 1_500 },
      sandbox: { qrTtlSeconds: 30_000, config: { threeDsTtlSeconds: 30_000 } },
    };
    stack = await startStack(common);
    holds = await startStack({ ...common, hold: true });
    filter = `(TaskQueue="${stack.taskQueue}" OR TaskQueue="${holds.taskQueue}")`;
  });
  afterAll(async () => {
    await stack?.close();
    await holds?.close();
  });

  it('the Stack Trace tab names the step a waiting 3-D Secure checkout waits in', async () => {
    const started = await stack.payments.sessions.startCardCheckout(
      { reference: ref('trace'), amount: rub(700), card: card(THREE_DS), customer: { user_id: 'u' } },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('awaiting_payer');
    const trace = await stack.temporal.workflow.getHandle(started.sessionId).query<string>('__stack_trace');
    process.stderr.write(`[looking] the waiting checkout's stack trace:\n${trace}\n`);
    // Where it waits: in the payer's step (workflows/steps/payer.ts, inside payerAction), called from the
    // checkout's process at its payer step (workflows/checkout.ts).
    const payer = linesOf('workflows/steps/payer.ts', 'export async function payerAction');
    const calledAt = lineOf('workflows/checkout.ts', 'await payerAction(session, deadline)');
    // Each frame is named by its function, as the code names it: `at payerAction (.../payer.ts:22:0)`.
    const frames = [...trace.matchAll(/at (\S+) \([^()]*workflows\/([\w/.-]+\.ts):(\d+):\d+\)/g)].map(
      (m) => ({ fn: m[1]!, file: m[2]!, line: Number(m[3]) }),
    );
    expect(frames).toContainEqual({ fn: 'checkoutWorkflow', file: 'checkout.ts', line: calledAt });
    expect(
      frames.some(
        (f) =>
          f.fn === 'payerAction' && f.file === 'steps/payer.ts' && f.line > payer.from && f.line < payer.to,
      ),
    ).toBe(true);
    await completeThreeDs(started.userAction, '12345');
    await stack.payments.sessions.notifyPayerReturned(started.sessionId);
    expect((await finalView(stack.temporal, started.sessionId)).phase).toBe('succeeded');
  });

  it('every kind under load, looked at all the time, a worker restart mid-flight: every history replays', async () => {
    // The reconciler of the main task queue runs its passes (and continues as new after each) meanwhile.
    await ensureReconciler(stack.temporal, stack.taskQueue, {
      everyMs: 2_000,
      windowMs: 60 * 60_000,
      pageSize: 20,
    });
    // A recurring token for the subscription, from a first payment.
    const first = await stack.payments.sessions.startCardCheckout({
      reference: ref('token'),
      amount: rub(100),
      card: card(FRICTIONLESS),
      customer: { user_id: 'subscriber' },
      allowRecurring: true,
    });
    const token = (await finalView(stack.temporal, first.sessionId)).recurringToken!;
    expect(token).toMatch(/^rt_/);

    const operator = new Operator(stack.temporal, filter);
    operator.start(6);
    try {
      await underLoad(operator, token);
    } finally {
      await operator.stop();
    }
  });

  async function underLoad(operator: Operator, token: string): Promise<void> {
    const subscription = await stack.payments.subscriptions.start({
      reference: ref('sub'),
      token,
      amount: rub(300),
      schedule: { interval: 'second', count: 3 },
      customer: { user_id: 'subscriber' },
    });

    const plan = Array.from({ length: SESSIONS }, (_, i) => ({
      kind: KINDS[i % KINDS.length]!,
      at: draws.float(`order/${i}`),
    }))
      .sort((a, b) => a.at - b.at)
      .map((p) => p.kind);
    const restartAt = draws.int('restart-at', Math.floor(SESSIONS / 3), Math.floor((2 * SESSIONS) / 3));
    const results: { kind: Kind; stack: TestStack; view: SessionView }[] = [];
    let next = 0;
    let restarted = false;
    // What each lane is doing, for the progress line: the kind, then its session and step once known.
    const inFlight = new Map<number, string>();
    const lane = async () => {
      while (next < plan.length) {
        const i = next++;
        if (i >= restartAt && !restarted) {
          restarted = true;
          process.stderr.write(`[looking] restarting the worker at session ${i}\n`);
          const stopping = Date.now();
          await stack.restartWorker();
          process.stderr.write(`[looking] the worker restarted in ${Date.now() - stopping} ms\n`);
        }
        const kind = plan[i]!;
        inFlight.set(i, kind);
        const run = await bounded(
          runKind(
            kind,
            draws.child(`session/${i}`),
            (step) => inFlight.set(i, `${kind}: ${step}`),
            (id) => operator.look(id),
          ),
          SESSION_BOUND_MS,
          () => inFlight.get(i)!,
        ).catch((err: Error) => {
          throw new Error(`session ${i} (${kind}): ${err.message}`, { cause: err });
        });
        inFlight.delete(i);
        results.push({ kind, ...run });
      }
    };
    const progress = setInterval(
      () =>
        process.stderr.write(
          `[looking] ${results.length} of ${plan.length} sessions done; under way: ${JSON.stringify([...inFlight])}\n`,
        ),
      30_000,
    );
    try {
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
    } finally {
      clearInterval(progress);
    }

    // The subscription bills a few periods meanwhile, then is canceled.
    await viewUntil(
      'the subscription paid two periods',
      () => stack.payments.subscriptions.get(subscription.subscriptionId),
      (s) => s.totals.succeeded >= 2,
      120_000,
      250,
    );
    await stack.payments.subscriptions.cancel(subscription.subscriptionId);
    // What a busy machine left unpaid is written off, so that the subscription ends.
    await stack.payments.subscriptions.writeOff(subscription.subscriptionId).catch(() => undefined);
    // Every session's workflow follows it a little after its result: let them close while looked at.
    await until(
      'every session workflow closed',
      async () => {
        const open: string[] = [];
        for await (const w of stack.temporal.workflow.list({
          query: `${filter} AND ExecutionStatus="Running" AND WorkflowType!="reconcilerWorkflow"`,
        }))
          open.push(`${w.type} ${w.workflowId}`);
        return open;
      },
      (open) => open.length === 0,
      180_000,
      1_000,
    );
    const looked: Looked = await operator.stop();
    await stack.temporal.workflow
      .getHandle(`reconciler-${stack.taskQueue}`)
      .terminate()
      .catch(() => undefined);
    process.stderr.write(
      `[looking] ${looked.looks} looks at ${looked.workflows} workflows, ${looked.queries} queries, ${looked.stackTraces} stack traces ` +
        `(${looked.stackTracesWithFrames} naming paysaga's code), ${looked.unanswered} unanswered, ` +
        `${looked.askedAgain} answered "ask again", ` +
        `failures ${JSON.stringify([...looked.failures])}\n`,
    );
    // Workflows were opened while they ran, again and again: each session the moment it started (the
    // quickest may have ended by then), and by the eyes whenever they came by.
    expect({
      workflows: looked.workflows > SESSIONS / 3,
      stackTracesWithFrames: looked.stackTracesWithFrames > SESSIONS,
      failures: [...looked.failures],
    }).toEqual({ workflows: true, stackTracesWithFrames: true, failures: [] });

    // The provider's truth: each session ended as the provider says, each movement once in the ledger.
    for (const { kind, stack: s, view } of results) {
      const truth = (await s.provider.state({ session_id: view.sessionId })).session_info;
      const expected =
        kind === 'identity_check' || kind === 'payout_batch'
          ? 'succeeded' // the session's own reading of the provider (recipient registered; every payout)
          : phaseOf(truth);
      expect({ kind, id: view.sessionId, phase: view.phase }).toEqual({
        kind,
        id: view.sessionId,
        phase: expected,
      });
      if (kind === 'payout_batch') {
        expect(view.payouts?.map((p) => p.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
        expect(truth.payouts?.length).toBe(3);
      }
      const entries = (await s.sandbox.ledger(view.sessionId)).entries.map(
        (e) => `${e.kind}:${e.operationId}:${e.refundId ?? ''}`,
      );
      expect({ id: view.sessionId, entries }).toEqual({ id: view.sessionId, entries: [...new Set(entries)] });
    }

    const replayed: Replayed = await replayAll(stack.temporal, filter, sharedWorkflowBundlePath());
    process.stderr.write(
      `[looking] ${replayed.histories} histories replayed, ${replayed.failures.length} failed, ` +
        `${replayed.failedTasks.length} workflow tasks failed live\n`,
    );
    expect(replayed.histories).toBeGreaterThan(SESSIONS);
    expect(replayed.failures).toEqual([]);
    expect(replayed.failedTasks).toEqual([]);
  }

  /** Drives one session of `kind` to its end, as its payer and partner would; returns its last view. */
  async function runKind(
    kind: Kind,
    d: Draws,
    say: (step: string) => void,
    /** Opens the session in the UI's way the moment it has started, whatever the eyes are busy with. */
    look: (sessionId: string) => Promise<void>,
  ): Promise<{ stack: TestStack; view: SessionView }> {
    const pause = () => sleep(d.int('pause', 0, 1_500));
    const final = (s: TestStack, id: string) => {
      say(`${id} waiting for its end`);
      return finalView(s.temporal, id);
    };
    // The early return answers at the latest after its wait: on a busy machine the session may not show
    // what its payer or partner acts on yet, so they wait for it as a backend would.
    const ready = async (
      s: TestStack,
      started: SessionView,
      what: string,
      shows: (v: SessionView) => boolean,
    ) => {
      if (shows(started)) return started;
      say(`${started.sessionId} waiting for ${what}`);
      return viewUntil(what, () => s.payments.sessions.get(started.sessionId), shows, 120_000);
    };
    const cardPayment = async (s: TestStack, amount: number) => {
      const started = await s.payments.sessions.startCardCheckout({
        reference: ref(kind),
        amount: rub(amount),
        card: card(FRICTIONLESS),
        customer: { user_id: 'u' },
      });
      await look(started.sessionId);
      return final(s, started.sessionId);
    };
    switch (kind) {
      case 'card':
        return { stack, view: await cardPayment(stack, d.int('amount', 100, 9_000)) };
      case 'three_ds': {
        const started = await stack.payments.sessions.startCardCheckout(
          { reference: ref(kind), amount: rub(2_000), card: card(THREE_DS), customer: { user_id: 'u' } },
          { waitMs: 15_000 },
        );
        await look(started.sessionId);
        const shown = await ready(stack, started, 'the 3-D Secure page', (v) => !!v.userAction);
        say(`${started.sessionId} paying by 3-D Secure`);
        await pause();
        await completeThreeDs(shown.userAction, '12345');
        await stack.payments.sessions.notifyPayerReturned(started.sessionId);
        return { stack, view: await final(stack, started.sessionId) };
      }
      case 'hold_finalize': {
        const started = await holds.payments.sessions.startCardCheckout(
          {
            reference: ref(kind),
            amount: rub(5_000),
            card: card(FRICTIONLESS),
            customer: { user_id: 'u' },
            settings: { finalization: { mode: 'manual', deadlineMs: 60_000 } },
          },
          { waitMs: 15_000 },
        );
        await look(started.sessionId);
        await ready(holds, started, 'the hold', (v) => v.phase === 'awaiting_finalization');
        say(`${started.sessionId} finalizing`);
        await pause();
        await holds.payments.sessions.finalize(started.sessionId, d.int('finalize', 1_000, 5_000));
        return { stack: holds, view: await final(holds, started.sessionId) };
      }
      case 'fps':
      case 'fps_binding': {
        const started =
          kind === 'fps'
            ? await stack.payments.sessions.startFpsPayment(
                { reference: ref(kind), amount: rub(2_500), customer: { user_id: 'u' } },
                { waitMs: 15_000 },
              )
            : await stack.payments.sessions.startFpsBinding(
                { reference: ref(kind), customer: { user_id: 'u' } },
                { waitMs: 15_000 },
              );
        await look(started.sessionId);
        const shown = await ready(stack, started, 'the QR', (v) => v.operations.length > 0);
        say(`${started.sessionId} paying the QR`);
        await pause();
        expect(await payFpsQr(stack.sandbox.url, shown.operations[0]!.id)).toBe(200);
        return { stack, view: await final(stack, started.sessionId) };
      }
      case 'payment_form': {
        const started = await stack.payments.sessions.startPaymentForm(
          { reference: ref(kind), amount: rub(1_500), customer: { user_id: 'u' } },
          { waitMs: 15_000 },
        );
        await look(started.sessionId);
        const shown = await ready(stack, started, 'the form', (v) => !!v.publicToken);
        say(`${started.sessionId} paying in the form`);
        await pause();
        await stack.sandbox.plain('POST', '/sandbox/widgets/payment-form', {
          public_token: shown.publicToken,
          card_number: TEST_CARD.visa,
          card_exp_month: '12',
          card_exp_year: '2030',
          card_code: '123',
        });
        return { stack, view: await final(stack, started.sessionId) };
      }
      case 'payout': {
        const started = await stack.payments.sessions.startPayout({
          reference: ref(kind),
          amount: rub(3_000),
          destination: { type: 'card', card: card(TEST_CARD.mastercard) },
        });
        await look(started.sessionId);
        return { stack, view: await final(stack, started.sessionId) };
      }
      case 'payout_batch': {
        const started = await startFpsPayoutBatch(stack, ref(kind), [400, 500, 600]);
        await look(started.sessionId);
        return { stack, view: await final(stack, started.sessionId) };
      }
      case 'refund': {
        const paid = await cardPayment(stack, 6_000);
        say(`${paid.sessionId} refunding`);
        await pause();
        await stack.payments.refunds.create(paid.sessionId, { reference: ref('rf'), amount: 2_000 });
        return {
          stack,
          view: await viewUntil(
            'the refund succeeded',
            () => stack.payments.sessions.get(paid.sessionId),
            (v) => v.refunds.some((r) => r.status === 'succeeded'),
          ),
        };
      }
      case 'chargeback': {
        // Filed the moment the payment is final, while its workflow still follows it (or is closing).
        const paid = await cardPayment(stack, 4_000);
        say(`${paid.sessionId} charged back`);
        await stack.sandbox.plain('POST', '/sandbox/chargebacks', {
          session_id: paid.sessionId,
          sum_info: { sum: 1_000, currency_code: 'rub' },
        });
        return {
          stack,
          view: await viewUntil(
            'the chargeback recorded on the session',
            () => stack.payments.sessions.get(paid.sessionId),
            (v) => v.totals.chargedBack === 1_000,
          ),
        };
      }
      case 'identity_check': {
        const banks = (await stack.sandbox.get('sbp/banks')).body.banks as { id: string }[];
        const started = await stack.payments.identityChecks.start({
          reference: ref(kind),
          phone: '+79991112233',
          bankId: banks[0]!.id,
          payee: { given_name: 'Ivan', family_name: 'Ivanov' },
        });
        await look(started.sessionId);
        return { stack, view: await final(stack, started.sessionId) };
      }
    }
  }
});
