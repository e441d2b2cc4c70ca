/**
 * No card data in Temporal (docs/decisions/002-card-data-never-enters-temporal.md): after card checkouts
 * (frictionless and 3-D Secure) and card payouts (raw and hashed), the exported workflow histories, with
 * every payload decoded, and everything the worker logged hold no PAN, no CVV and no hashed card field.
 */
import { Runtime, type LogLevel, type LogMetadata } from '@temporalio/worker';
import { CardDetails } from '../../provider';
import { finalView } from '../helpers/final';
import { completeThreeDs } from '../helpers/payer';
import { startStack, type TestStack } from '../helpers/stack';
import { TEST_CARD } from '../../sandbox/test-cards';

const CVV = '739';
const card = (pan: string) =>
  new CardDetails({ card_number: pan, card_exp_month: '12', card_exp_year: '30', card_code: CVV });
const rub = (amount: number) => ({ amount, currency: 'RUB' });
let n = 0;
const ref = (p: string) => `${p}-${Date.now()}-${++n}`;

const FRICTIONLESS = TEST_CARD.visa;
const THREE_DS = TEST_CARD.visa3ds;
const PAYOUT_CARD = TEST_CARD.mastercard;
const HASHED_SOURCE = TEST_CARD.mir;

/** The history as JSON, byte fields (payload data among them) as base64, as an export would hold it. */
function exportHistory(history: unknown): string {
  const plain = (v: unknown): unknown => {
    if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
    if (Array.isArray(v)) return v.map(plain);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = plain(x);
      return out;
    }
    return v;
  };
  return JSON.stringify(plain(history));
}

/** The history as exported JSON, plus the decoded text of every payload in it. */
function readable(historyJson: string): string {
  const parts = [historyJson];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'data' && typeof x === 'string') parts.push(Buffer.from(x, 'base64').toString('utf8'));
        else walk(x);
      }
    }
  };
  walk(JSON.parse(historyJson));
  return parts.join('\n');
}

function spaced(pan: string): string {
  return pan.replace(/(\d{4})(?=\d)/g, '$1 ');
}

describe.each([true, false])(
  'no card data in workflow histories or worker logs (webhooks %s)',
  (webhooks) => {
    let stack: TestStack;
    const logged: string[] = [];
    let restoreLogger: () => void;
    beforeAll(async () => {
      // Everything the worker logs, at every level, goes through the Runtime's logger.
      const logger = Runtime.instance().logger;
      const original = logger.log.bind(logger);
      logger.log = (level: LogLevel, message: string, meta?: LogMetadata) => {
        logged.push(
          `${level} ${message} ${JSON.stringify(meta ?? {}, (_k, v: unknown) =>
            typeof v === 'bigint' ? v.toString() : v instanceof Error ? `${v.message} ${v.stack}` : v,
          )}`,
        );
        original(level, message, meta);
      };
      restoreLogger = () => (logger.log = original);
      stack = await startStack({ webhooks });
    });
    afterAll(async () => {
      await stack?.close();
      restoreLogger?.();
    });

    it('card checkout, 3-DS checkout, raw card payout, hashed card payout: none leaks', async () => {
      const sessions: string[] = [];
      const finished = async (id: string) => {
        sessions.push(id);
        return finalView(stack.temporal, id);
      };

      // 1. Frictionless card checkout.
      const a = await stack.payments.sessions.startCardCheckout({
        reference: ref('hyg-card'),
        amount: rub(1_000),
        card: card(FRICTIONLESS),
        customer: { user_id: 'u1' },
      });
      expect((await finished(a.sessionId)).phase).toBe('succeeded');

      // 2. 3-D Secure checkout.
      const b = await stack.payments.sessions.startCardCheckout(
        {
          reference: ref('hyg-3ds'),
          amount: rub(2_000),
          card: card(THREE_DS),
          customer: { user_id: 'u1' },
          backUrl: 'https://shop.example/return',
        },
        { waitMs: 15_000 },
      );
      expect(b.phase).toBe('awaiting_payer');
      await completeThreeDs(b.userAction, '12345');
      await stack.payments.sessions.notifyPayerReturned(b.sessionId);
      expect((await finished(b.sessionId)).phase).toBe('succeeded');

      // 3. Raw card payout.
      const c = await stack.payments.sessions.startPayout({
        reference: ref('hyg-payout'),
        amount: rub(3_000),
        destination: { type: 'card', card: card(PAYOUT_CARD) },
      });
      expect((await finished(c.sessionId)).phase).toBe('succeeded');

      // 4. Hashed card payout (tokenization widget).
      const pt = await stack.sandbox.post('public_token', { card_tokenize: { allow_tokenization: false } });
      const widget = await stack.sandbox.plain('POST', '/sandbox/widgets/card-tokenize', {
        public_token: pt.body.public_token,
        card_number: HASHED_SOURCE,
        card_exp_month: '01',
        card_exp_year: '2031',
        name_on_card: 'IVAN IVANOV',
        card_code: CVV,
      });
      const hashed = widget.body.hashed_card_details as Record<string, string>;
      expect(hashed.hashed_card_number).toMatch(/^hcn_/);
      const d = await stack.payments.sessions.startPayout({
        reference: ref('hyg-hashed'),
        amount: rub(700),
        destination: { type: 'hashed_card', card: hashed },
      });
      expect((await finished(d.sessionId)).phase).toBe('succeeded');

      // Let late webhooks land (they become signals or late-event runs).
      await new Promise((r) => setTimeout(r, 500));

      const needles = [
        FRICTIONLESS,
        THREE_DS,
        PAYOUT_CARD,
        HASHED_SOURCE,
        ...[FRICTIONLESS, THREE_DS, PAYOUT_CARD, HASHED_SOURCE].map(spaced),
        `"${CVV}"`,
        'card_number',
        'card_code',
        'hashed_card_number',
        'hashed_card_code',
        ...Object.values(hashed),
      ];
      let runs = 0;
      for (const id of sessions) {
        // Every run under the session's id (a late-event run would be one), not only the latest.
        const runIds = new Set([(await stack.temporal.workflow.getHandle(id).describe()).runId]);
        for await (const wf of stack.temporal.workflow.list({ query: `WorkflowId = '${id}'` }))
          runIds.add(wf.runId);
        for (const runId of runIds) {
          const history = await stack.temporal.workflow.getHandle(id, runId).fetchHistory();
          const text = readable(exportHistory(history));
          // The export is readable (payloads decoded), so the search below is meaningful.
          expect(text).toContain('"transaction_status"');
          expect(text).toContain('card_last4');
          for (const needle of needles) {
            if (text.includes(needle)) throw new Error(`history of ${id} (${runId}) contains ${needle}`);
          }
          runs++;
        }
      }
      expect(runs).toBeGreaterThanOrEqual(sessions.length);
      const logs = logged.join('\n');
      expect(logs.length).toBeGreaterThan(0);
      for (const needle of needles) {
        if (logs.includes(needle)) throw new Error(`the worker logged ${needle}`);
      }
    });
  },
);
