import type { SessionInfo } from '../provider/schemas';

const lastOp = (s: SessionInfo) => [...(s.payments ?? []), ...(s.payouts ?? [])].at(-1);

/**
 * After an unknown outcome: does the state prove that `step` took effect? Steps are those the
 * workflows derive keys from (`start`, `start:N`, `approve:<op>`, `cancel:<op>`, `finalize:<op>`).
 * `undefined` means the state cannot tell; then the call is resent with the same key.
 */
export function stepTookEffect(step: string, s: SessionInfo): boolean | undefined {
  const [name, arg] = step.split(':', 2);
  const ops = [...(s.payments ?? []), ...(s.payouts ?? [])];
  const op = arg ? ops.find((o) => o.id === arg) : undefined;
  switch (name) {
    case 'start':
      return ops.length >= (arg ? Number(arg) + 1 : 1);
    case 'approve':
      return !!op && !(op.transaction_status === 'pending' && s.next_step !== 'finalize');
    case 'finalize':
      return !!op && op.transaction_status !== 'pending' && s.next_step !== 'finalize';
    case 'cancel':
      return s.transaction_status === 'canceled' || lastOp(s)?.transaction_status === 'unsuccessful';
    default:
      return undefined;
  }
}
