/**
 * An FPS payment by QR code or deep link (shown to the caller as userAction). When the QR expires, a new
 * payment is started on the session (up to `qrRenewals` times); then the session ends with qr_expired.
 *
 *   start -> (approval -> the payer pays in the bank app -> a new QR if it expired)* -> outcome -> aftercare
 *
 * The messages it accepts are registered below, in sight (common/kinds.ts KINDS says the same).
 */
import type { SessionInput, SessionState } from '../common/session-input';
import { Session } from './session';
import { acceptProviderNews, answerReads } from './steps/messages';
import { phaseOf, qrExpired } from '../common/snapshot';
import { aftercare, acceptRefunds } from './steps/aftercare';
import { acceptDecisions, approval } from './steps/decisions';
import { outcome } from './steps/outcome';
import { payerAction, renewExpiredQr } from './steps/payer';
import { startOperation } from './steps/start';

export async function fpsPaymentWorkflow(input: SessionInput): Promise<SessionState> {
  const renewals = input.qrRenewals ?? 0;
  // An expired QR that is about to be replaced is not the end of the session: it goes on. Once the
  // payer's part is over (deadline passed, renewals used up), an expiry is the end.
  let renewing = renewals > 0;
  const session = new Session(input, {
    phase: (snapshot, state) =>
      renewing && qrExpired(snapshot) && state.renewals < renewals ? 'processing' : phaseOf(snapshot),
  });
  acceptProviderNews(session);
  answerReads(session);
  acceptDecisions(session, ['approve', 'cancel']);
  acceptRefunds(session);

  if (await startOperation(session, input.start)) {
    const deadline = session.reducer.deadline();
    do {
      await approval(session, deadline);
      await payerAction(session, deadline);
    } while (Date.now() < deadline && (await renewExpiredQr(session, input.start, renewals)));
    renewing = false;
    session.reducer.reread();
    await outcome(session, deadline);
  }
  await aftercare(session);
  return session.close();
}
