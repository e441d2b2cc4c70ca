/**
 * FPS payment: the QR / deep link is surfaced to the caller; when it expires, a new payment is
 * started on the session (up to `qrRenewals` times) or the session ends with `qr_expired`.
 */
import { runOperation } from './payment-process';
import { closeSession, guarded, openSession, startOperation } from './session-lifecycle';
import type { SessionInput, SessionResult } from './types';

export async function fpsPaymentWorkflow(input: SessionInput): Promise<SessionResult> {
  const run = openSession(input);
  const renewBody = input.start.by === 'workflow' ? input.start.body : {};
  await guarded(
    run,
    async () =>
      (await startOperation(run, input)) &&
      runOperation(run, { qrRenewals: input.qrRenewals ?? 0, renewBody }),
  );
  if (run.phase === 'failed' && !run.reason) run.reason = 'qr_expired';
  return closeSession(run);
}
