/**
 * Several provider projects (PAYSAGA_PROJECTS): a 3-D Secure project takes the payment form
 * and customer-initiated recurring payments, the default project everything else. Each session's calls
 * are signed for its own project from start to end (the sandbox's request log shows the project of every
 * call), and the provider's webhooks of both projects are verified and applied to their sessions.
 */
import { completeThreeDs } from '../helpers/payer';
import { finalView } from '../helpers/final';
import { startStack, type TestStack } from '../helpers/stack';
import { TEST_CARD } from '../../sandbox/test-cards';
import { CardDetails } from '../../provider';

jest.setTimeout(120_000);

const THREE_DS_PROJECT = 'proj_3ds';
const rub = (amount: number) => ({ amount, currency: 'RUB' });
let n = 0;
const ref = (p: string) => `${p}-${Date.now()}-${++n}`;
const customer = { user_id: 'u-projects' };

describe('several provider projects', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({
      webhooks: true,
      projects: [{ id: THREE_DS_PROJECT, use: ['recurring_client', 'payment_form'] }],
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** The projects paysaga signed a session's calls for, and how many calls it made. */
  async function projectsOf(sessionId: string): Promise<{ projects: string[]; calls: number }> {
    const res = await stack.sandbox.plain('GET', `/sandbox/requests?session_id=${sessionId}`);
    const requests = res.body.requests as { project_id?: string; http_status: number }[];
    return { projects: [...new Set(requests.map((r) => r.project_id ?? '?'))], calls: requests.length };
  }

  /** The provider's webhooks the session applied (verified with the service keys). */
  async function appliedWebhooks(sessionId: string): Promise<number> {
    const audit = await stack.payments.sessions.providerEvents(sessionId);
    return audit.filter((e) => e.via === 'webhook' && e.outcome === 'applied').length;
  }

  it('a customer-initiated recurring payment on the 3-D Secure project, a card checkout on the default one', async () => {
    // A recurring token on the 3-D Secure project: the payment form, on the partner's recorded consent.
    const form = await stack.payments.sessions.startPaymentForm(
      { reference: ref('form'), amount: rub(500), customer, allowRecurring: true },
      { waitMs: 10_000 },
    );
    const token = form.publicToken!;
    const paid = await stack.sandbox.plain('POST', '/sandbox/widgets/payment-form', {
      public_token: token,
      card_number: TEST_CARD.visa,
      card_exp_month: '12',
      card_exp_year: '30',
      card_code: '123',
    });
    expect(paid.status).toBe(200);
    const formDone = await finalView(stack.temporal, form.sessionId);
    expect(formDone.phase).toBe('succeeded');
    const recurringToken = formDone.recurringToken!;
    expect(recurringToken).toMatch(/^rt_/);

    const cit = await stack.payments.sessions.startRecurringPayment(
      {
        reference: ref('cit'),
        amount: rub(1_200),
        token: recurringToken,
        initiatedBy: 'client',
        backUrl: 'https://shop.example/back',
        customer,
      },
      { waitMs: 15_000 },
    );
    expect(cit.phase).toBe('awaiting_payer');
    await completeThreeDs(cit.userAction, '12345');
    const citDone = await finalView(stack.temporal, cit.sessionId);
    expect(citDone.phase).toBe('succeeded');

    const card = await stack.payments.sessions.startCardCheckout({
      reference: ref('card'),
      amount: rub(900),
      card: new CardDetails({
        card_number: TEST_CARD.visa,
        card_exp_month: '12',
        card_exp_year: '30',
        card_code: '123',
      }),
      customer,
    });
    const cardDone = await finalView(stack.temporal, card.sessionId);
    expect(cardDone.phase).toBe('succeeded');

    // Every call of each session under its own project, from the first to the last.
    expect(await projectsOf(form.sessionId)).toMatchObject({ projects: [THREE_DS_PROJECT] });
    expect(await projectsOf(cit.sessionId)).toMatchObject({ projects: [THREE_DS_PROJECT] });
    expect(await projectsOf(card.sessionId)).toMatchObject({ projects: [stack.sandbox.projectId] });
    expect(citDone.request).toMatchObject({ projectId: THREE_DS_PROJECT });
    expect(cardDone.request.projectId).toBeUndefined();
    // The webhooks of both projects were verified and applied.
    expect(await appliedWebhooks(cit.sessionId)).toBeGreaterThan(0);
    expect(await appliedWebhooks(card.sessionId)).toBeGreaterThan(0);
    // The money moved in each project's own ledger.
    const ledger = await stack.sandbox.plain('GET', `/sandbox/ledger?project_id=${THREE_DS_PROJECT}`);
    const sessions = new Set((ledger.body.entries as { sessionId: string }[]).map((e) => e.sessionId));
    expect(sessions.has(cit.sessionId)).toBe(true);
    expect(sessions.has(card.sessionId)).toBe(false);
  });
});
