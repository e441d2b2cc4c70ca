import { z } from 'zod';
import type { Money, OperationRecord } from './model';

/*
 * Opt-in commission information (spec rule 5: fee_info "when enabled by the account manager").
 * A project with `fees` shows fee_info on every payment and payout that is not unsuccessful; without it
 * nothing is shown. Amounts are integer minor units; the percentage is exact to 1/10000 of a percent.
 */

const PERCENT_UNITS = 10_000;

export const feeConfigSchema = z.strictObject({
  /** commission in percent of the amount, 0–100, at most 4 decimals */
  percent: z
    .number()
    .min(0)
    .max(100)
    .refine((p) => Math.abs(p * PERCENT_UNITS - Math.round(p * PERCENT_UNITS)) < 1e-6, {
      message: 'at most 4 decimals',
    }),
  /** smallest fee in minor units (never more than the amount itself) */
  minimum: z.number().int().nonnegative().default(0),
  /** `merchant_fee`: fee.merchant_fee; `net_gross`: gross (the amount) and net (amount − fee) */
  form: z.enum(['merchant_fee', 'net_gross']).default('merchant_fee'),
});

export type FeeConfig = z.output<typeof feeConfigSchema>;

/** percent of `amount` rounded half up, at least `minimum`, at most `amount`; nothing on nothing. */
export function feeOf(amount: number, cfg: FeeConfig): number {
  if (amount <= 0) return 0;
  const scale = BigInt(100 * PERCENT_UNITS);
  const exact = BigInt(amount) * BigInt(Math.round(cfg.percent * PERCENT_UNITS));
  const rounded = Number((exact + scale / 2n) / scale);
  return Math.min(amount, Math.max(cfg.minimum, rounded));
}

/**
 * The amount the fee is taken on: a payout's amount; a payment's amount until it is finalized, then
 * the finalized amount, and once successful what was actually charged (0 for an FPS binding).
 */
export function feeBase(op: OperationRecord): number {
  if (op.kind === 'payout') return op.sum.sum;
  if (op.status === 'successful') return op.captured;
  return op.finalized ?? op.sum.sum;
}

/** fee_info for `base` (currency already rendered), in the project's form. */
export function renderFeeInfo(cfg: FeeConfig, base: Money): Record<string, unknown> {
  const fee = feeOf(base.sum, cfg);
  if (cfg.form === 'merchant_fee') return { fee: { merchant_fee: { ...base, sum: fee } } };
  return { net: { ...base, sum: base.sum - fee }, gross: { ...base } };
}
