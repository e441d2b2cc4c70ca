/**
 * The first step of a session: the operation gets going at the provider, the way the session's input
 * says (the workflow sends start itself, the starter sends card data, the payer uses the payment form, or
 * the provider call that made the session started it too).
 */
import * as wf from '@temporalio/workflow';
import { refusalOf, refusedField, stateConflict, type ProviderRefusal } from '../../common/failures';
import { claimStartUpdate, reportStartSignal } from '../../common/messages';
import { parseMessage, startReport } from '../../common/message-schemas';
import { reason, refusalReason } from '../../common/reasons';
import { START_CLAIM_MS, type StartSpec } from '../../common/session-input';
import { payerLookCap } from '../../common/settings';
import { stepName } from '../../common/steps';
import { provider } from '../calls';
import type { Session } from '../session';
import { operationOf } from '../../common/snapshot';
import { startNextPayout } from './payouts';

/** Sends start/checkout (n > 0: an FPS payment renewed after its QR expired) or start/transfer. */
export async function sendStart(
  session: Session,
  start: Extract<StartSpec, { by: 'workflow' }>,
  n = 0,
): Promise<void> {
  const step = stepName({ kind: 'start', n });
  const args = {
    ...session.runtime.callArgs(),
    verifyFirst: session.runtime.sentAt(step) !== undefined || session.runtime.stale(),
  };
  session.runtime.noteSent(step);
  const answer = await session.runtime.call(`start/${start.operation}`, () =>
    start.operation === 'checkout'
      ? provider.startCheckout({ ...args, body: withReturn(session, start.body), n })
      : provider.startTransfer({ ...args, body: start.body }),
  );
  session.reducer.apply(answer, 'call', `start/${start.operation}`);
}

/**
 * The payer's way back (back_url) goes with the payment's start: paysaga's signed return for this session
 * when a public URL is configured, else the partner's own page.
 */
function withReturn<B extends { payment_settings?: Record<string, unknown> }>(session: Session, body: B): B {
  const back = session.state.request.returnUrl ?? session.state.request.backUrl;
  if (!back) return body;
  return { ...body, payment_settings: { ...body.payment_settings, back_url: back } };
}

/** Gets the operation going; false when it never started (the session is then final). */
export async function startOperation(session: Session, start: StartSpec): Promise<boolean> {
  if (session.isFinal()) return false;
  if (operationOf(session.state.snapshot)) return true;
  switch (start.by) {
    case 'provider':
      return true;
    case 'workflow':
      try {
        await sendStart(session, start);
        return true;
      } catch (err) {
        const refusal = refusalOf(err);
        session.reducer.settle('failed', refusalReason('start_failed', refusal));
        return false;
      }
    case 'starter':
      return waitForStarter(session);
    case 'widget':
      return widgetStart(session, start.widget, start.page);
    case 'queue':
      return startNextPayout(session);
  }
}

/** The starter is sending card data: the start stays open for it this long. */
function claimStart(session: Session, forMs: number): void {
  session.state.startClaimUntil = Date.now() + forMs;
  session.journal.log('call', 'start_claimed', 'the starter is sending card data');
}

/** The provider refused the starter's card (reported by reportStart): the session fails with it. */
function refuseStart(session: Session, refusal: ProviderRefusal): void {
  session.state.startRefusal = refusal;
  session.journal.log('call', 'start_refused', `${refusal.errorCode}: ${refusal.description}`);
}

/**
 * Card data is sent by the starter, outside Temporal (claimStart, then reportStart). Registered by every
 * kind whose card the starter may send; refused once the start is no longer open, so card data is never
 * sent to a session paysaga has already reported.
 */
export function acceptStarter(session: Session): void {
  wf.setHandler(
    claimStartUpdate,
    () => {
      claimStart(session, START_CLAIM_MS);
      return session.answer();
    },
    {
      validator: () => {
        if (
          session.isFinal() ||
          operationOf(session.state.snapshot) ||
          session.state.startRefusal ||
          session.state.startClaimUntil === undefined
        )
          throw stateConflict(`the start is not open (the session is ${session.phase})`, {
            code: 'start_not_open',
            phase: session.phase,
          });
      },
    },
  );
  wf.setHandler(reportStartSignal, (report) => {
    // The starter is paysaga's own code; a report that does not read is logged and changes nothing (the
    // session then learns its start from the provider, as for a lost report).
    const read = parseMessage(startReport, report);
    if (!read.ok) session.journal.log('call', 'start_report', `refused: ${read.why}`);
    else if ('refused' in report) refuseStart(session, report.refused);
    else session.inbox.claim(report.snapshot, 'start (starter)');
  });
}

/**
 * The creating request holds a claim on the start while it sends the card; a repeat may claim it again
 * while the session still waits. Once the deadline has passed with no claim and no operation at the
 * provider, the start is closed to everyone, so the session can end `canceled` truthfully: nothing can
 * start it any more.
 */
async function waitForStarter(session: Session): Promise<boolean> {
  if (session.state.startClaimUntil === undefined) claimStart(session, START_CLAIM_MS);
  const { startMs } = session.state.settings.deadlines;
  const closesAt = () =>
    Math.max(Date.parse(session.view().createdAt) + startMs, session.state.startClaimUntil ?? 0);
  // The starter's start call is the session's own, made outside Temporal for the card's sake: until it
  // reports, the session waits on it as on any call of its own in flight.
  await session.runtime.onItsBehalf(async () => {
    while (
      !(await session.runtime.until(
        () => !!operationOf(session.state.snapshot) || session.state.startRefusal !== undefined,
        closesAt(),
      ))
    ) {
      if (Date.now() >= closesAt()) break;
    }
  });
  if (operationOf(session.state.snapshot)) return true;
  const refused = session.state.startRefusal;
  if (refused) session.reducer.settle('failed', refusalReason('start_failed', refused));
  else session.reducer.settle('canceled', reason('not_started', 'card data was never submitted'));
  return false;
}

/**
 * The payer uses a widget (the payment form, or the FPS page) with a public token made for this session.
 * The provider takes no idempotency key for it and accepts one per session: a token whose answer was lost
 * can never be shown to anyone, which is reported (needs attention) rather than failed, since nothing
 * moved and the payer's time still runs.
 */
async function widgetStart(
  session: Session,
  widget: { lang?: string; showAutopayOption?: boolean },
  page?: 'fps',
): Promise<boolean> {
  if (!session.view().publicToken) {
    try {
      session.state.publicToken = await session.runtime.call('public_token', () =>
        page === 'fps'
          ? provider.createFpsWidgetToken({
              ...session.runtime.callArgs(),
              widget: widget.lang ? { lang: widget.lang } : {},
            })
          : provider.createPaymentFormToken({ ...session.runtime.callArgs(), widget }),
      );
      session.journal.log('call', 'public_token', 'widget token created');
    } catch (err) {
      const refusal = refusalOf(err);
      const taken =
        refusal.errorCode === 'invalid_request' && refusedField(refusal.description).rule === 'not_unique';
      if (!taken) {
        session.reducer.settle('failed', refusalReason('public_token_refused', refusal));
        return false;
      }
      const lost = 'the provider made a token whose answer never arrived';
      session.reducer.noteCause(reason('payment_form_token_lost', lost));
      session.journal.needsAttention(reason('payment_form_token_lost', `${lost}; no payer can use it`));
    }
  }
  const deadline = Date.now() + session.state.settings.deadlines.payerActionMs;
  const cap = payerLookCap(session.state.settings.polling);
  if (await session.runtime.until(() => !!operationOf(session.state.snapshot), deadline, cap)) return true;
  session.reducer.noteCause(reason('payer_did_not_use_the_payment_form'));
  session.reducer.settle('canceled');
  return false;
}
