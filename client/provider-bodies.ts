/**
 * The provider's request bodies a session needs, built from validated inputs by typed functions (the
 * compiler checks each against the provider's schemas in provider/schemas/requests.ts).
 */
import type { Money } from '../common/views';
import type { CheckoutStart, TransferStart } from '../common/session-input';
import type { CardDetails, HashedCardDetails } from '../provider/schemas/card';
import type {
  IdentityCheckRequest,
  InitCheckoutRequest,
  InitiateRequest,
  InitTransferRequest,
  ParticipantInfo,
  PaymentSettings,
  StartCheckoutRequest,
  StartTransferRequest,
  UserInfo,
} from '../provider/schemas';

export interface Parties {
  customer?: UserInfo;
  participant?: ParticipantInfo;
  extraInfo?: unknown;
  /** A sub-partner's transaction: extra_info carries {merchant: "", submerchant} (the spec's shape). */
  subPartner?: { merchant?: ''; submerchant: string };
}

/** extra_info as the provider takes it: the partner's own, with a sub-partner's fields merged in. */
export function extraInfoOf(p: Parties): unknown {
  if (!p.subPartner) return p.extraInfo;
  const own = (p.extraInfo ?? {}) as Record<string, unknown>;
  return { ...own, merchant: '', submerchant: p.subPartner.submerchant };
}

/**
 * transaction/initiate. The partner's back URL is not sent: paysaga gives the provider its own signed
 * return address for the session at start, and sends the payer on to the partner's page afterwards.
 */
export function initiateBody(
  money: Money | undefined,
  p: Parties,
  extra: Pick<InitiateRequest, 'payment_info'> = {},
): InitiateRequest {
  const extraInfo = extraInfoOf(p);
  return {
    // A session of several payouts names no amount: each start/transfer carries its own.
    ...(money ? { sum_info: { sum: money.amount, currency_code: money.currency } } : {}),
    ...(p.customer ? { user_info: p.customer } : {}),
    ...(p.participant ? { participant_info: p.participant } : {}),
    ...(extraInfo !== undefined ? { extra_info: extraInfo } : {}),
    ...extra,
  };
}

export function paymentSettings(o: {
  returnUrl?: string;
  allowRecurring?: boolean;
}): PaymentSettings | undefined {
  if (o.returnUrl === undefined && o.allowRecurring === undefined) return undefined;
  return {
    ...(o.returnUrl ? { back_url: o.returnUrl } : {}),
    ...(o.allowRecurring !== undefined ? { allow_recurring: o.allowRecurring } : {}),
  };
}

/** start/checkout of a card the partner holds: sent by the starter, never through Temporal. */
export function cardCheckoutStart(
  sessionId: string,
  card: CardDetails,
  settings?: PaymentSettings,
): StartCheckoutRequest {
  return {
    session_id: sessionId,
    payment_info: { type: 'card_info', card_info: { type: 'card_details', card_details: card } },
    ...(settings ? { payment_settings: settings } : {}),
  };
}

/** start/transfer to a card given as card data (raw or hashed): sent by the starter too. */
export function cardPayoutStart(
  sessionId: string,
  card: CardDetails | HashedCardDetails,
  hashed: boolean,
): StartTransferRequest {
  return {
    session_id: sessionId,
    payout_info: {
      type: 'card_info',
      card_info: hashed
        ? { type: 'hashed_card_details', hashed_card_details: card }
        : { type: 'card_details', card_details: card },
    },
  };
}

export function recurringCheckoutStart(
  token: string,
  byClient: boolean,
  settings?: PaymentSettings,
): CheckoutStart {
  return {
    payment_info: {
      type: 'recurring_token_info',
      recurring_token_info: { token, ...(byClient ? { initiated_by: 'client' } : {}) },
    },
    ...(settings ? { payment_settings: settings } : {}),
  };
}

/**
 * init/checkout of a merchant-initiated payment by token (the spec's one-call sequence): the session and
 * its payment at once. user_info is required there.
 */
export function recurringInitCheckout(
  money: Money,
  token: string,
  p: Parties & { customer: UserInfo },
): InitCheckoutRequest {
  const extra = extraInfoOf(p);
  return {
    payment_info: { type: 'recurring_token_info', recurring_token_info: { token } },
    sum_info: { sum: money.amount, currency_code: money.currency },
    user_info: p.customer,
    ...(p.participant ? { participant_info: p.participant } : {}),
    ...(extra !== undefined ? { extra_info: extra } : {}),
  };
}

export function fpsCheckoutStart(
  moneyPurpose: string | undefined,
  settings?: PaymentSettings,
): CheckoutStart {
  return {
    payment_info: {
      type: 'fps_info',
      ...(moneyPurpose ? { fps_info: { money_purpose: moneyPurpose } } : {}),
    },
    ...(settings ? { payment_settings: settings } : {}),
  };
}

export type PayoutTarget =
  | { type: 'tokenized_card'; token: string }
  | { type: 'recurring_token'; token: string }
  | { type: 'fps_account'; phone: string; bankId: string };

export function payoutStart(d: PayoutTarget): TransferStart {
  switch (d.type) {
    case 'tokenized_card':
      return {
        payout_info: {
          type: 'card_info',
          card_info: { type: 'tokenized_card', tokenized_card: { token: d.token } },
        },
      };
    case 'recurring_token':
      return { payout_info: { type: 'recurring_token_info', recurring_token_info: { token: d.token } } };
    case 'fps_account':
      return {
        payout_info: {
          type: 'account_info',
          account_info: {
            payment_system: 'fps_info_verification',
            fps_info_verification: { phone_number: d.phone, bank_identifier: d.bankId },
          },
        },
      };
  }
}

/** start/transfer of one payout of a session of several: its recipient, amount and parties. */
export function sessionPayoutStart(
  money: Money,
  target: PayoutTarget,
  p: Pick<Parties, 'customer' | 'participant'>,
): TransferStart {
  return {
    ...payoutStart(target),
    sum_info: { sum: money.amount, currency_code: money.currency },
    ...(p.customer ? { user_info: p.customer } : {}),
    ...(p.participant ? { participant_info: p.participant } : {}),
  };
}

/** init/transfer of a payout by token (tokenized card, recurring token): the session and its payout at once. */
export function initTransferBody(
  money: Money,
  target: Extract<PayoutTarget, { type: 'tokenized_card' | 'recurring_token' }>,
  p: Parties,
): InitTransferRequest {
  const extraInfo = extraInfoOf(p);
  return {
    // payoutStart always names the payout for these targets.
    payout_info: payoutStart(target).payout_info!,
    sum_info: { sum: money.amount, currency_code: money.currency },
    ...(p.customer ? { user_info: p.customer } : {}),
    ...(p.participant ? { participant_info: p.participant } : {}),
    ...(extraInfo !== undefined ? { extra_info: extraInfo } : {}),
  };
}

export function identityCheckBody(
  phone: string,
  bankId: string,
  payee: NonNullable<ParticipantInfo['payee_info']>,
): IdentityCheckRequest {
  return {
    payout_info: {
      type: 'account_info',
      account_info: {
        payment_system: 'fps_info_verification',
        fps_info_verification: { phone_number: phone, bank_identifier: bankId },
      },
    },
    participant_info: { payee_info: payee },
  };
}
