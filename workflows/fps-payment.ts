/**
 * FPS payment: the QR / deep link is surfaced to the caller; when it expires, a new payment is
 * started on the session (up to `qrRenewals` times) or the session ends with `qr_expired`.
 */
import { explainEnd, renewableQr, runOperation, type QrRenewal } from './payment-process';
import { closeSession, guarded, openSession, startOperation } from './session-lifecycle';
import { phaseOf } from './snapshot';
import type { SessionInput, SessionResult } from './types';

export async function fpsPaymentWorkflow(input: SessionInput): Promise<SessionResult> {
  const renewal: QrRenewal = {
    max: input.qrRenewals ?? 0,
    used: 0,
    body: input.start.by === 'workflow' ? input.start.body : {},
  };
  // An expired QR that is about to be replaced is not the end of the session: it goes on.
  const run = openSession(input, {
    phaseFn: (s) => (renewableQr(s, renewal) ? 'processing' : phaseOf(s)),
  });
  await guarded(run, async () => (await startOperation(run, input)) && runOperation(run, { renewal }));
  explainEnd(run);
  return closeSession(run);
}
