/**
 * The payer's part: 3-D Secure, the bank app or the QR (docs/decisions/006-payer-actions-surfaced.md). The
 * provider cannot cancel an operation the payer is acting on (spec rule 3), so when the payer's time runs out
 * the session follows the provider to its own end instead of reporting a cancel that may not be true.
 */
import type { Session } from '../session';
import { qrExpired } from '../../common/snapshot';
import { sendStart } from './start';
import type { StartSpec } from '../../common/session-input';
import { payerLookCap } from '../../common/settings';

export async function payerAction(session: Session, deadline: number): Promise<void> {
  await session.runtime.until(
    () =>
      session.state.providerPhase === 'awaiting_payer' ||
      session.state.providerPhase === 'awaiting_finalization' ||
      session.isFinal(),
    deadline,
  );
  if (session.state.providerPhase !== 'awaiting_payer' || session.isFinal()) return;
  const payerDeadline = Math.min(Date.now() + session.state.settings.deadlines.payerActionMs, deadline);
  if (
    await session.runtime.until(
      () => session.state.providerPhase !== 'awaiting_payer' || session.isFinal(),
      payerDeadline,
      payerLookCap(session.state.settings.polling),
    )
  )
    return;
  session.journal.log(
    'timer',
    'payer_action_deadline',
    'the payer did not act in time; following the provider to its end',
  );
}

/**
 * FPS: the QR expired and renewals are left: a new payment is started on the session (key `start:N`),
 * and the payer gets the full time again. False when there is nothing to renew.
 */
export async function renewExpiredQr(
  session: Session,
  start: StartSpec,
  renewalsAllowed: number,
): Promise<boolean> {
  if (
    start.by !== 'workflow' ||
    !qrExpired(session.state.snapshot) ||
    session.state.renewals >= renewalsAllowed
  )
    return false;
  const n = ++session.state.renewals;
  session.journal.log('call', 'renew_payment', `qr_expired: new payment #${n} of ${renewalsAllowed}`);
  await sendStart(session, start, n);
  return true;
}
