/**
 * Structured reasons: `reason` and `attention` are a code from a closed list with words
 * beside it. What earlier runs and store rows carry as `"code: words"` strings reads as the reason
 * today's code makes for the same cause; the OpenAPI document lists the codes as enums; and nothing in
 * paysaga or its tests reads a reason's (or an error message's) words to decide anything.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  readAttention,
  readEndReason,
  refundRefusal,
  upgradeSessionReasons,
} from '../../common/legacy-reasons';
import {
  ATTENTION_CODES,
  END_REASON_CODES,
  reason,
  reasonText,
  refusalReason,
  sameReason,
} from '../../common/reasons';
import { DEFAULT_SETTINGS } from '../../common/settings';
import { newSessionState, type SessionState } from '../../common/session-input';
import { sessionViewOf } from '../../common/session-view';
import { sessionView } from '../../common/views';
import { servedOpenApi, type Schema } from '../helpers/openapi-doc';

describe('reasons of runs and records from before: read as today makes them', () => {
  const refusal = { errorCode: 'invalid_request', description: 'payment_info.card_info.invalid' };
  it.each([
    ['insufficient_funds', reason('provider_error', undefined, { providerCode: 'insufficient_funds' })],
    ['start_failed: invalid_request: payment_info.card_info.invalid', refusalReason('start_failed', refusal)],
    ['not_started: card data was never submitted', reason('not_started', 'card data was never submitted')],
    ['canceled_by_partner', reason('canceled_by_partner')],
    ['canceled_by_partner: out of stock', reason('canceled_by_partner', 'out of stock')],
    [
      'decision_deadline: no approve decision in time',
      reason('decision_deadline', 'no approve decision in time'),
    ],
    ['finalize_refused: no', reason('finalize_refused', 'no')],
    [
      'amount_mismatch: amount 999 differs from 1000',
      reason('amount_mismatch', 'amount 999 differs from 1000'),
    ],
    ['identity_check_failed: fraud', reason('identity_check_failed', undefined, { providerCode: 'fraud' })],
    ['payouts_unsuccessful: a: x; b: y', reason('payouts_unsuccessful', 'a: x; b: y')],
    ['charge failed', reason('charge_failed')],
    ['charge canceled', reason('charge_canceled')],
    ['charge_refused: the reference failed', reason('charge_refused', 'the reference failed')],
  ])('end reason %j', (legacy, today) => {
    expect(readEndReason(legacy)).toEqual(today);
    // Already a reason: left as it is.
    expect(readEndReason(today)).toBe(today);
  });

  it('what a field held by its own meaning: a refund refusal', () => {
    expect(readEndReason('the provider refused transaction/refund', refundRefusal)).toEqual(
      reason('refund_refused', 'the provider refused transaction/refund'),
    );
    expect(readEndReason(undefined)).toBeUndefined();
  });

  it.each([
    [
      'transaction/state: the provider is unavailable',
      reason('provider_call_failing', 'the provider is unavailable', { subject: 'transaction/state' }),
    ],
    [
      'refund r-1: still processing at the provider; following it',
      reason('refund_pending', 'still processing at the provider; following it', { subject: 'r-1' }),
    ],
    [
      'charge sub-1:p2: the provider session is not open yet',
      reason('charge_not_open', 'the provider session is not open yet', { subject: 'sub-1:p2' }),
    ],
    ['charge ps_9: timed out', reason('provider_call_failing', 'timed out', { subject: 'ps_9' })],
    ['drift: the provider now shows failed', reason('drift', 'the provider now shows failed')],
    ['binding_without_token: no token', reason('binding_without_token', 'no token')],
  ])('attention %j', (legacy, today) => {
    // Equal field by field: a carried attention is not raised a second time when the run goes on.
    expect(sameReason(readAttention(legacy), today)).toBe(true);
    expect(readAttention(legacy)).toEqual(today);
  });

  it('a carried session state and its view: every reason read, the view valid', () => {
    const base = newSessionState(
      {
        sessionId: 'ps_1',
        kind: 'payout',
        reference: 'r',
        request: { money: { amount: 100, currency: 'rub' } },
        settings: DEFAULT_SETTINGS,
      },
      '2026-11-27T00:00:00.000Z',
    );
    const legacy = {
      ...base,
      providerPhase: 'failed',
      final: { phase: 'failed', at: '2026-11-27T00:01:00.000Z', reason: 'payouts_unsuccessful: a: x' },
      reason: 'payouts_unsuccessful: a: x',
      attention: { reason: 'drift: the provider now shows succeeded', since: '2026-11-27T00:02:00.000Z' },
      refunds: [
        {
          reference: 'rf',
          amount: 1,
          currency: 'rub',
          status: 'failed',
          reason: 'the provider refused transaction/refund',
          requestedAt: '2026-11-27T00:00:00.000Z',
        },
      ],
      payouts: [
        {
          reference: 'a',
          money: { amount: 100, currency: 'rub' },
          addedAt: '2026-11-27T00:00:00.000Z',
          payoutId: 'po_1',
          reason: 'canceled_by_partner: wrong account',
        },
      ],
      snapshot: {
        id: 'ps_1',
        transaction_status: 'completed',
        updated_at: '2026-11-27T00:01:00.000000Z',
        payouts: [
          { id: 'po_1', transaction_status: 'unsuccessful', sum_info: { sum: 100, currency_code: 'rub' } },
        ],
      },
    } as unknown as SessionState;
    const upgraded = upgradeSessionReasons(legacy);
    expect(upgraded.final?.reason).toEqual(reason('payouts_unsuccessful', 'a: x'));
    expect(upgraded.reason).toEqual(reason('payouts_unsuccessful', 'a: x'));
    expect(upgraded.attention).toEqual({
      ...reason('drift', 'the provider now shows succeeded'),
      since: '2026-11-27T00:02:00.000Z',
    });
    expect(upgraded.refunds[0]?.reason).toEqual(
      reason('refund_refused', 'the provider refused transaction/refund'),
    );
    expect(upgraded.payouts?.[0]?.reason).toEqual(reason('canceled_by_partner', 'wrong account'));
    // A closed run's result or a store row is read without the workflow: the view reads it too.
    for (const st of [legacy, upgraded]) {
      const view = sessionViewOf(st);
      expect(sessionView.safeParse(view).error).toBeUndefined();
      expect(view.reason).toEqual(reason('payouts_unsuccessful', 'a: x'));
      expect(view.attention?.code).toBe('drift');
      expect(view.payouts?.[0]?.reason).toEqual(reason('canceled_by_partner', 'wrong account'));
    }
  });

  it('a reason in one line for logs: code, what it is about, the words', () => {
    const r = reason('provider_call_failing', 'timed out', { subject: 'transaction/state' });
    expect(reasonText(r)).toBe('provider_call_failing (transaction/state): timed out');
    expect(
      reasonText(refusalReason('start_failed', { errorCode: 'invalid_request', description: 'x.y' })),
    ).toBe('start_failed (invalid_request): x.y');
  });
});

describe('the OpenAPI document lists the reason codes', () => {
  let doc: Schema;
  beforeAll(async () => {
    doc = await servedOpenApi();
  });

  /** Every `enum` that sits under a `code` property of a schema titled `title`, anywhere in the document. */
  function codeEnums(node: unknown, title: string, found: unknown[][] = []): unknown[][] {
    if (Array.isArray(node)) node.forEach((n) => codeEnums(n, title, found));
    else if (node && typeof node === 'object') {
      const o = node as Schema;
      const code = (o.properties as Schema | undefined)?.code as Schema | undefined;
      if (o.title === title && Array.isArray(code?.enum)) found.push(code.enum);
      Object.values(o).forEach((v) => codeEnums(v, title, found));
    }
    return found;
  }

  it('EndReason and Attention: every code, as an enum, wherever a session or subscription shows one', () => {
    const ends = codeEnums(doc, 'EndReason');
    const attentions = codeEnums(doc, 'Attention');
    // session reason, payout reason, refund reason, charge reason, dunning lastReason, canceledReason
    expect(ends.length).toBeGreaterThanOrEqual(6);
    expect(attentions.length).toBeGreaterThanOrEqual(2);
    for (const e of ends) expect(e).toEqual([...END_REASON_CODES]);
    for (const e of attentions) expect(e).toEqual([...ATTENTION_CODES]);
  });

  it('api/README.md lists every code', () => {
    const readme = fs.readFileSync(path.resolve(__dirname, '../../api/README.md'), 'utf8');
    const missing = [...END_REASON_CODES, ...ATTENTION_CODES].filter((c) => !readme.includes(`\`${c}\``));
    expect(missing).toEqual([]);
  });
});

describe('nothing reads the words of a reason or an error message', () => {
  const ROOT = path.resolve(__dirname, '../..');
  const FOLDERS = [
    'activities',
    'api',
    'cli',
    'client',
    'common',
    'platform',
    'provider',
    'sandbox',
    'store',
    'workers',
    'workflows',
    'scripts',
    'bench',
    'test',
  ];
  /** The one reader of reasons as earlier runs wrote them, and this file (which names what it looks for). */
  const EXEMPT = new Set([
    'common/legacy-reasons.ts',
    'test/unit/reasons.test.ts',
    // Its own scan of source for `.message` matching (the pattern names what it looks for).
    'test/unit/api-sources.test.ts',
  ]);
  const files = (dir: string): string[] =>
    fs.existsSync(path.join(ROOT, dir))
      ? fs
          .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
          .flatMap((e) =>
            e.isDirectory()
              ? e.name === 'node_modules'
                ? []
                : files(path.join(dir, e.name))
              : /\.(ts|js|mjs)$/.test(e.name)
                ? [path.join(dir, e.name)]
                : [],
          )
      : [];

  /** Text matching: a prefix, a pattern, a part of a string. */
  const MATCHING =
    /\.(startsWith|endsWith|includes|indexOf|match|matchAll|search)\(|\.test\(|toMatch\(|stringMatching\(/;
  /** `toThrow(/.../)`, also with the pattern on the next line. */
  const THROWN_PATTERN = /\.(toThrow|toThrowError)\(\s*\//;
  /** A reason or attention anywhere; an error's message, or the provider's error description. */
  const REASON = /\b(reason|attention|lastReason|canceledReason)\b(?!s\b)/;
  const MESSAGE = /(\.message|error_description|\.error[!?]?\)|stderr)\b/;

  function offenders(pick: (line: string) => boolean): string[] {
    return FOLDERS.flatMap(files)
      .filter((f) => !EXEMPT.has(f))
      .flatMap((f) =>
        fs
          .readFileSync(path.join(ROOT, f), 'utf8')
          .split('\n')
          .map((line, i) => [line, `${f}:${i + 1}`] as const)
          .filter(([line]) => !/^\s*(\/\/|\*)/.test(line) && MATCHING.test(line) && pick(line))
          .map(([, where]) => where),
      );
  }

  it('no reason or attention is matched by its text, in source or tests', () => {
    expect(offenders((line) => REASON.test(line))).toEqual([]);
  });

  it('no error message or provider description is matched by its text, in source or tests', () => {
    expect(offenders((line) => MESSAGE.test(line))).toEqual([]);
  });

  it('no thrown error is matched by a pattern over its message, in tests', () => {
    // toThrow(/.../) matches the words; toThrow(new Error('...')) and a class compare whole values.
    const offenders = FOLDERS.flatMap(files)
      .filter((f) => !EXEMPT.has(f))
      .filter((f) => THROWN_PATTERN.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('the scan sees what it looks for (a check that cannot fail would prove nothing)', () => {
    expect(THROWN_PATTERN.test('expect(() => f()).toThrow(\n  /boom/,\n);')).toBe(true);
    expect(THROWN_PATTERN.test("expect(() => f()).toThrow(new Error('boom'));")).toBe(false);
    const planted = [
      "if (s.attention?.reason.startsWith('drift')) x();",
      'expect(err.message).toMatch(/boom/);',
    ];
    expect(planted.filter((l) => MATCHING.test(l) && REASON.test(l))).toHaveLength(1);
    expect(planted.filter((l) => MATCHING.test(l) && MESSAGE.test(l))).toHaveLength(1);
  });
});
