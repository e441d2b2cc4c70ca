/**
 * The steps of a session that the provider may see twice: each one's idempotency key is derived from
 * (session id, step name) and never from an attempt (docs/decisions/004-deterministic-idempotency-keys.md).
 * One union, one function that names a step and one that reads a name back; the names are those sessions have
 * always used, so keys of sessions in flight stay the same. Safe for workflow code.
 */

import type { SessionInfo } from '../provider/schemas';

export type Step =
  /** start/checkout or start/transfer; `n` > 0 for an FPS payment renewed after its QR expired. */
  | { kind: 'start'; n: number }
  /** A decision on one operation (the provider asks for it per operation). */
  | { kind: 'approve' | 'cancel' | 'finalize'; operationId: string }
  /** A refund, named by the partner's reference of it. */
  | { kind: 'refund'; reference: string }
  /** One of several payouts of a session (start/transfer), named by the partner's reference of it. */
  | { kind: 'payout'; reference: string };

export type StepKind = Step['kind'];

/**
 * `start`, `start:2`, `approve:pm_1`, `finalize:pm_1`, `cancel:pm_1`, `refund:<reference>`,
 * `payout:<reference>`.
 */
export function stepName(step: Step): string {
  switch (step.kind) {
    case 'start':
      return step.n === 0 ? 'start' : `start:${step.n}`;
    case 'approve':
    case 'cancel':
    case 'finalize':
      return `${step.kind}:${step.operationId}`;
    case 'refund':
    case 'payout':
      return `${step.kind}:${step.reference}`;
  }
}

/** The step a name stands for; undefined for a name no step makes. */
export function parseStep(name: string): Step | undefined {
  const i = name.indexOf(':');
  const kind = i < 0 ? name : name.slice(0, i);
  const arg = i < 0 ? undefined : name.slice(i + 1);
  switch (kind) {
    case 'start': {
      if (arg === undefined) return { kind: 'start', n: 0 };
      const n = Number(arg);
      return Number.isSafeInteger(n) && n > 0 ? { kind: 'start', n } : undefined;
    }
    case 'approve':
    case 'cancel':
    case 'finalize':
      return arg ? { kind, operationId: arg } : undefined;
    case 'refund':
    case 'payout':
      return arg ? { kind, reference: arg } : undefined;
    default:
      return undefined;
  }
}

// ---- what the provider's state says about a step ----

const operations = (s: SessionInfo) => [...(s.payments ?? []), ...(s.payouts ?? [])];

export function stepTookEffect(
  step: Step,
  s: SessionInfo,
  context: { knownRefundIds?: readonly string[]; knownPayoutIds?: readonly string[] } = {},
): boolean | undefined {
  const ops = operations(s);
  switch (step.kind) {
    case 'start':
      return ops.length >= step.n + 1;
    case 'approve': {
      const op = ops.find((o) => o.id === step.operationId);
      // Waiting for approval is `pending` with next_step approve (or not yet asked): anything else is past
      // it.
      return !!op && !(op.transaction_status === 'pending' && s.next_step !== 'finalize');
    }
    case 'finalize': {
      const op = ops.find((o) => o.id === step.operationId);
      return !!op && op.transaction_status !== 'pending' && s.next_step !== 'finalize';
    }
    case 'cancel': {
      const op = ops.find((o) => o.id === step.operationId);
      return s.transaction_status === 'canceled' || op?.transaction_status === 'unsuccessful';
    }
    case 'payout': {
      // Payouts of one session are sent one at a time too: a payout record that was not there before
      // this one was first sent is this one.
      const known = new Set(context.knownPayoutIds ?? []);
      return (s.payouts ?? []).some((p) => !known.has(p.id));
    }
    case 'refund': {
      // Refunds of one session are sent one at a time, so a refund record that was not there before
      // this one was first sent is this one.
      const known = new Set(context.knownRefundIds ?? []);
      return (s.payments ?? []).some((p) =>
        (p.moneyback ?? []).some((m) => !m.chargeback && !known.has(m.id)),
      );
    }
  }
}

/** The refund record a refund step made: the first non-chargeback record not known before it was sent. */
export function refundRecordOf(
  s: SessionInfo | undefined,
  knownRefundIds: readonly string[],
): string | undefined {
  const known = new Set(knownRefundIds);
  for (const p of s?.payments ?? [])
    for (const m of p.moneyback ?? []) if (!m.chargeback && !known.has(m.id)) return m.id;
  return undefined;
}
