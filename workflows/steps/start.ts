/**
 * The first step of a session: the operation gets going at the provider, the way the session's input
 * says (the workflow sends start itself, the starter sends card data, the payer uses the payment form, or
 * the provider call that made the session started it too).
 */
import * as wf from '@temporalio/workflow';
import { refusalOf, refusedField, stateConflict, type ProviderRefusal } from '../../common/failures';
import { claimStartUpdate, reportStartUpdate } from '../../common/messages';
import { checkArgument, startReport } from '../../common/message-schemas';
import type { StartSpec } from '../../common/session-input';
import { stepName } from '../../common/steps';
import { provider } from '../calls';
import type { Session } from '../session';
import { operationOf } from '../../common/snapshot';
import { startNextPayout } from './payouts';

/** How long a claim of the starter holds the start deadline open (more than any provider call lasts). */
const START_CLAIM_MS = 2 * 60_000;

/** Sends start/checkout (n > 0: an FPS payment renewed after its QR expired) or start/transfer. */
export async function sendStart(
  s: Session,
  start: Extract<StartSpec, { by: 'workflow' }>,
  n = 0,
): Promise<void> {
  const step = stepName({ kind: 'start', n });
  const args = {
    ...s.runtime.callArgs(),
    verifyFirst: s.runtime.sentAt(step) !== undefined || s.runtime.stale(),
  };
  s.runtime.noteSent(step);
  const answer = await s.runtime.call(`start/${start.operation}`, () =>
    start.operation === 'checkout'
      ? provider.startCheckout({ ...args, body: withReturn(s, start.body), n })
      : provider.startTransfer({ ...args, body: start.body }),
  );
  s.rules.apply(answer, 'call', `start/${start.operation}`);
}

/**
 * The payer's way back (back_url) goes with the payment's start: paysaga's signed return for this session
 * when a public URL is configured, else the partner's own page.
 */
function withReturn<B extends { payment_settings?: Record<string, unknown> }>(s: Session, body: B): B {
  const back = s.state.request.returnUrl ?? s.state.request.backUrl;
  if (!back) return body;
  return { ...body, payment_settings: { ...body.payment_settings, back_url: back } };
}

/** Gets the operation going; false when it never started (the session is then final). */
export async function startOperation(s: Session, start: StartSpec): Promise<boolean> {
  if (s.isFinal()) return false;
  if (operationOf(s.state.snapshot)) return true;
  switch (start.by) {
    case 'provider':
      return true;
    case 'workflow':
      try {
        await sendStart(s, start);
        return true;
      } catch (err) {
        const refusal = refusalOf(err);
        s.rules.settle('failed', `start_failed: ${refusal.errorCode}: ${refusal.description}`);
        return false;
      }
    case 'starter':
      return waitForStarter(s);
    case 'widget':
      return widgetStart(s, start.widget, start.page);
    case 'queue':
      return startNextPayout(s);
  }
}

/** The starter is sending card data: the start stays open for it this long. */
function claimStart(s: Session, forMs: number): void {
  s.state.startClaimUntil = Date.now() + forMs;
  s.record.log('call', 'start_claimed', 'the starter is sending card data');
}

/** The provider refused the starter's card (reported by reportStart): the session fails with it. */
function refuseStart(s: Session, refusal: ProviderRefusal): void {
  s.state.startRefusal = refusal;
  s.record.log('call', 'start_refused', `${refusal.errorCode}: ${refusal.description}`);
}

/**
 * Card data is sent by the starter, outside Temporal (claimStart, then reportStart). Registered by every
 * kind whose card the starter may send; refused once the start is no longer open, so card data is never
 * sent to a session paysaga has already reported.
 */
export function acceptStarter(s: Session): void {
  wf.setHandler(
    claimStartUpdate,
    () => {
      claimStart(s, START_CLAIM_MS);
      return s.view();
    },
    {
      validator: () => {
        if (
          s.isFinal() ||
          operationOf(s.state.snapshot) ||
          s.state.startRefusal ||
          s.state.startClaimUntil === undefined
        )
          throw stateConflict(`the start is not open (the session is ${s.phase})`, {
            code: 'start_not_open',
            phase: s.phase,
          });
      },
    },
  );
  wf.setHandler(
    reportStartUpdate,
    async (report) => {
      if ('refused' in report) refuseStart(s, report.refused);
      else s.inbox.claim(report.snapshot, 'start (starter)');
      if (report.wait)
        await wf.condition(() => s.isFinal() || s.rules.waitsForSomeone(), report.wait.timeoutMs);
      return s.view();
    },
    { validator: (report) => void checkArgument(startReport, report) },
  );
}

/**
 * The creating request holds a claim on the start while it sends the card; a repeat may claim it again
 * while the session still waits. Once the deadline has passed with no claim and no operation at the
 * provider, the start is closed to everyone, so the session can end `canceled` truthfully: nothing can
 * start it any more.
 */
async function waitForStarter(s: Session): Promise<boolean> {
  if (s.state.startClaimUntil === undefined) claimStart(s, START_CLAIM_MS);
  const { startMs } = s.state.settings.deadlines;
  const closesAt = () => Math.max(Date.parse(s.view().createdAt) + startMs, s.state.startClaimUntil ?? 0);
  while (
    !(await s.runtime.until(
      () => !!operationOf(s.state.snapshot) || s.state.startRefusal !== undefined,
      closesAt(),
    ))
  ) {
    if (Date.now() >= closesAt()) break;
  }
  if (operationOf(s.state.snapshot)) return true;
  const refused = s.state.startRefusal;
  if (refused) s.rules.settle('failed', `start_failed: ${refused.errorCode}: ${refused.description}`);
  else s.rules.settle('canceled', 'not_started: card data was never submitted');
  return false;
}

/**
 * The payer uses a widget (the payment form, or the FPS page) with a public token made for this session.
 * The provider takes no idempotency key for it and accepts one per session: a token whose answer was lost
 * can never be shown to anyone, which is reported (needs attention) rather than failed, since nothing
 * moved and the payer's time still runs.
 */
async function widgetStart(
  s: Session,
  widget: { lang?: string; showAutopayOption?: boolean },
  page?: 'fps',
): Promise<boolean> {
  if (!s.view().publicToken) {
    try {
      s.state.publicToken = await s.runtime.call('public_token', () =>
        page === 'fps'
          ? provider.createFpsWidgetToken({
              ...s.runtime.callArgs(),
              widget: widget.lang ? { lang: widget.lang } : {},
            })
          : provider.createPaymentFormToken({ ...s.runtime.callArgs(), widget }),
      );
      s.record.log('call', 'public_token', 'widget token created');
    } catch (err) {
      const refusal = refusalOf(err);
      const taken =
        refusal.errorCode === 'invalid_request' && refusedField(refusal.description).rule === 'not_unique';
      if (!taken) {
        s.rules.settle('failed', `public_token_refused: ${refusal.errorCode}: ${refusal.description}`);
        return false;
      }
      s.rules.noteCause('payment_form_token_lost: the provider made a token whose answer never arrived');
      s.record.needsAttention(
        'payment_form_token_lost: the provider made a token whose answer never arrived; no payer can use it',
      );
    }
  }
  const deadline = Date.now() + s.state.settings.deadlines.payerActionMs;
  if (await s.runtime.until(() => !!operationOf(s.state.snapshot), deadline)) return true;
  s.rules.noteCause('payer_did_not_use_the_payment_form');
  s.rules.settle('canceled');
  return false;
}
