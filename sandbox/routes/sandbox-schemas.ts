import { z } from 'zod';
import { sumInfo } from '../../provider/schemas';

/** Bodies of the unsigned /sandbox routes (JSON or HTML form posts). */

const formBoolean = z
  .union([z.boolean(), z.enum(['on', 'true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'on' || v === 'true' || v === '1');

const digits = (min: number, max: number) =>
  z.string().regex(new RegExp(`^\\d{${min},${max}}$`), 'invalid_format');

export const chargebackBody = z.looseObject({ session_id: z.string().min(1), sum_info: sumInfo.optional() });

export const fpsPayBody = z.looseObject({
  phone_number: z
    .string()
    .regex(/^\+?\d{10,15}$/, 'invalid_format')
    .optional(),
});

export const threeDsBody = z.looseObject({ code: z.string().max(32).default('') });

export const paymentFormBody = z.looseObject({
  public_token: z.string().min(1),
  card_number: digits(12, 19),
  card_exp_month: z.string().regex(/^(0?[1-9]|1[0-2])$/, 'invalid_format'),
  card_exp_year: z.string().regex(/^\d{2}(\d{2})?$/, 'invalid_format'),
  card_code: digits(3, 4),
  /** the payer ticked the automatic-payments consent (only shown with show_autopay_option) */
  autopay: formBoolean.optional(),
});

export const cardTokenizeBody = z.looseObject({
  public_token: z.string().min(1),
  card_number: digits(12, 19),
  card_exp_month: z
    .string()
    .regex(/^(0?[1-9]|1[0-2])$/, 'invalid_format')
    .optional(),
  card_exp_year: z
    .string()
    .regex(/^\d{2}(\d{2})?$/, 'invalid_format')
    .optional(),
  name_on_card: z.string().min(1).max(64).optional(),
  card_code: digits(3, 4).optional(),
});

export const ledgerQuery = z.looseObject({
  session_id: z.string().min(1).optional(),
  project_id: z.string().min(1).optional(),
});
