/*
 * Every timed transition of the flows (STATES.md, the arrows marked "step" and the expiries), as data:
 * the scheduler stores these and hands them back when due, also after a restart. A job names the
 * operation by id; its step re-checks the stage it was scheduled for, so a job that lost its reason
 * (a canceled payment, a paid QR) does nothing.
 */
export type PaymentStep = 'prepare' | 'process' | 'authorize' | 'settle_fps';
export type PayoutStep = 'prepare' | 'execute' | 'identity_check';

export type Job =
  | { kind: 'payment'; step: PaymentStep; operationId: string }
  | { kind: 'payment'; step: 'capture'; operationId: string; amount: number }
  | { kind: 'payment_expiry'; action: '3ds' | 'qr'; operationId: string }
  | { kind: 'payout'; step: PayoutStep; operationId: string }
  | { kind: 'refund'; operationId: string; refundId: string };
