/**
 * The payer's part: 3-D Secure, the bank app or the QR (DESIGN decision 6). The provider cannot cancel
 * an operation the payer is acting on (spec rule 3), so when the payer's time runs out the session
 * follows the provider to its own end instead of reporting a cancel that may not be true.
 */
import type { Session } from '../session';
import { qrExpired } from '../../common/snapshot';
import { sendStart } from './start';
import type { StartSpec } from '../../common/session-input';

export async function payerAction(s: Session, deadline: number): Promise<void> {
  await s.runtime.until(
    () =>
      s.state.providerPhase === 'awaiting_payer' ||
      s.state.providerPhase === 'awaiting_finalization' ||
      s.isFinal(),
    deadline,
  );
  if (s.state.providerPhase !== 'awaiting_payer' || s.isFinal()) return;
  const payerDeadline = Math.min(Date.now() + s.state.settings.deadlines.payerActionMs, deadline);
  if (await s.runtime.until(() => s.state.providerPhase !== 'awaiting_payer' || s.isFinal(), payerDeadline))
    return;
  s.record.log(
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
  s: Session,
  start: StartSpec,
  renewalsAllowed: number,
): Promise<boolean> {
  if (start.by !== 'workflow' || !qrExpired(s.state.snapshot) || s.state.renewals >= renewalsAllowed)
    return false;
  const n = ++s.state.renewals;
  s.record.log('call', 'renew_payment', `qr_expired: new payment #${n} of ${renewalsAllowed}`);
  await sendStart(s, start, n);
  return true;
}
