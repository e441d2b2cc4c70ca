/**
 * A worker whose SDK lost a workflow task is replaced (workers/kept-worker.ts, workers/lost-task.ts).
 * The SDK's core writes one exact line at ERROR when it drops an activation; here that line is fed to
 * the listener the core's log reaches, as the core would. A session waiting for its payer across the
 * replacement ends as the provider says, and the next session is served by the new worker.
 */
import { LOST_TASK_LOG, noticeCoreLog } from '../../workers/lost-task';
import { finalView } from '../helpers/final';
import { completeThreeDs } from '../helpers/payer';
import { startStack, type TestStack } from '../helpers/stack';
import { until } from '../helpers/until';
import { card, FRICTIONLESS, references, rub, THREE_DS } from '../helpers/workflow-test';

const ref = references('kept');

describe('a worker whose SDK lost a workflow task', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks: true });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is replaced by a new worker that carries every session on', async () => {
    const waiting = await stack.payments.sessions.startCardCheckout(
      { reference: ref('3ds'), amount: rub(700), card: card(THREE_DS), customer: { user_id: 'u' } },
      { waitMs: 15_000 },
    );
    expect(waiting.phase).toBe('awaiting_payer');
    const before = stack.worker()!;

    // Other lines are no reason to replace a worker.
    noticeCoreLog('WARN', LOST_TASK_LOG);
    noticeCoreLog('ERROR', 'Task not found when completing');
    expect(stack.worker()).toBe(before);

    noticeCoreLog('ERROR', LOST_TASK_LOG);
    const after = await until(
      'a new worker',
      async () => stack.worker(),
      (w) => w !== before,
      30_000,
      50,
    );
    expect(after?.getState()).toBe('RUNNING');
    await until(
      'the old worker stopped',
      async () => before.getState(),
      (s) => s === 'STOPPED',
      30_000,
    );

    await completeThreeDs(waiting.userAction, '12345');
    await stack.payments.sessions.notifyPayerReturned(waiting.sessionId);
    expect((await finalView(stack.temporal, waiting.sessionId)).phase).toBe('succeeded');

    const next = await stack.payments.sessions.startCardCheckout({
      reference: ref('next'),
      amount: rub(300),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u' },
    });
    expect((await finalView(stack.temporal, next.sessionId)).phase).toBe('succeeded');
  });
});
