import { CardDetails } from '../../provider';
import {
  EncryptionCodec,
  ENCRYPTED_ENCODING,
  generateCodecKeySpec,
  parseCodecKeys,
} from '../../platform/codec';
import { startStack, type TestStack } from '../helpers/stack';
import { connectTestClient } from '../helpers/temporal';
import { finalView } from '../helpers/final';
import { cliSignal } from '../helpers/cli-signal';
import { until } from '../helpers/until';
import { UNENCRYPTED } from '../../common/message-schemas';
import { TEST_CARD } from '../../sandbox/test-cards';

describe('payloads in Temporal are encrypted', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ codec: new EncryptionCodec(parseCodecKeys(generateCodecKeySpec('test'))) });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('a checkout runs with the codec, and its history holds no readable payload', async () => {
    const reference = `codec-${Date.now()}`;
    const started = await stack.payments.sessions.startCardCheckout({
      reference,
      amount: { amount: 1234, currency: 'rub' },
      card: new CardDetails({
        card_number: TEST_CARD.visa,
        card_exp_month: '01',
        card_exp_year: '31',
        card_code: '999',
      }),
      customer: { user_id: 'codec-user' },
    });
    const result = await finalView(stack.temporal, started.sessionId);
    expect(result.phase).toBe('succeeded');
    expect(result.reference).toBe(reference);

    // Read the history without the codec, as the server stores it.
    const raw = await connectTestClient();
    try {
      const history = await raw.client.workflow.getHandle(started.sessionId).fetchHistory();
      // The reference names its workflow (`ref-<reference>`, the session's parent), as it names the
      // ClientReference search attribute: an identifier meant to be found. No payload shows it.
      const text = JSON.stringify(history).replaceAll(`"ref-${reference}"`, '"ref-<reference>"');
      expect(text).not.toContain(reference);
      expect(text).not.toContain('codec-user');
      const inputs = history.events!.find((e) => e.workflowExecutionStartedEventAttributes)!
        .workflowExecutionStartedEventAttributes!.input!.payloads!;
      expect(Buffer.from(inputs[0]!.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
    } finally {
      await raw.close();
    }
  });

  it('a plain signal sent without the codec keys is refused and recorded; the session is unchanged', async () => {
    const started = await stack.payments.sessions.startCardCheckout(
      {
        reference: `codec-plain-${Date.now()}`,
        amount: { amount: 700, currency: 'rub' },
        card: new CardDetails({
          card_number: TEST_CARD.visa3ds,
          card_exp_month: '01',
          card_exp_year: '31',
          card_code: '999',
        }),
        customer: { user_id: 'codec-user' },
      },
      { waitMs: 15_000 },
    );
    expect(started.phase).toBe('awaiting_payer');
    const held = (await stack.payments.sessions.get(started.sessionId)).lastSnapshot!;
    const claim = {
      type: 'checkout_results',
      session_info: {
        ...held,
        transaction_status: 'completed',
        updated_at: new Date(Date.now() + 60_000).toISOString(),
      },
    };
    await cliSignal(started.sessionId, 'providerEvent', {
      event: claim,
      receivedAt: new Date().toISOString(),
      via: 'webhook',
    });
    const audit = await until(
      'the refused delivery in the audit',
      () => stack.payments.sessions.providerEvents(started.sessionId),
      (a) => a.some((r) => r.outcome === 'refused'),
      30_000,
    );
    expect(audit.filter((r) => r.outcome === 'refused').map((r) => r.detail)).toEqual([UNENCRYPTED]);
    const after = await stack.payments.sessions.get(started.sessionId);
    expect(after).toMatchObject({ phase: 'awaiting_payer', final: false });
    expect(after.lastSnapshot?.updated_at).toBe(held.updated_at);
  });
});
