import { z } from 'zod';
import { cardDetailsFields, sumInfo } from '../../provider/schemas';

/** Bodies of the unsigned /sandbox routes (JSON or HTML form posts). */

const formBoolean = z
  .union([z.boolean(), z.enum(['on', 'true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'on' || v === 'true' || v === '1');

export const chargebackBody = z.looseObject({ session_id: z.string().min(1), sum_info: sumInfo.optional() });

export const fpsPayBody = z.looseObject({
  phone_number: z
    .string()
    .regex(/^\+?\d{10,15}$/, 'invalid_format')
    .optional(),
});

export const threeDsBody = z.looseObject({ code: z.string().max(32).default('') });

/** The payment-form widget: all card fields are asked for. */
export const fpsWidgetBody = z.looseObject({ public_token: z.string().min(1) });

export const paymentFormBody = z.looseObject({
  ...cardDetailsFields.required().shape,
  public_token: z.string().min(1),
  /** the payer ticked the automatic-payments consent (only shown with show_autopay_option) */
  autopay: formBoolean.optional(),
});

export const cardTokenizeBody = z.looseObject({
  ...cardDetailsFields.shape,
  public_token: z.string().min(1),
  name_on_card: z.string().min(1).max(64).optional(),
});

export const ledgerQuery = z.looseObject({
  session_id: z.string().min(1).optional(),
  project_id: z.string().min(1).optional(),
});
