import type { OperationStatus, RefundStatus } from '../provider/schemas';

/*
 * Internal records of the sandbox. They hold only what the service may keep: card references
 * (BIN, last 4, network) instead of card data, never a CVV. session_info is rendered from them (view.ts).
 */

export interface Money {
  sum: number;
  currency_code: string;
}

export interface ErrorInfo {
  error_code: string;
  error_description: string;
}

/** What the partner sent, kept to echo back (card data already replaced by references). */
export interface Echo {
  user_info?: Record<string, unknown>;
  participant_info?: Record<string, unknown>;
  payment_settings?: { back_url?: string; allow_recurring?: boolean } & Record<string, unknown>;
  extra_info?: unknown;
}

export type CardVia = 'card_details' | 'hashed_card_details' | 'tokenized_card';

export type Instrument =
  | { kind: 'card'; via: CardVia; cardId: string; token?: string }
  | { kind: 'fps'; moneyPurpose?: string }
  | { kind: 'fps_binding' }
  | { kind: 'recurring'; token: string; initiatedBy?: 'client' | 'merchant' }
  | { kind: 'fps_account'; phone: string; bank: string };

/** Where the payer's or recipient's money lives: a card, or an FPS account (bindings). */
export type FundingSource = { kind: 'card'; cardId: string } | { kind: 'fps_account'; accountId: string };

/**
 * Internal stage of an operation; the public transaction_status follows from it (STATES.md).
 * preparing: created, the service has not asked the partner yet.
 */
export type Stage =
  | 'preparing'
  | 'awaiting_approval'
  | 'processing'
  | 'awaiting_3ds'
  | 'awaiting_payer_qr'
  | 'awaiting_finalization'
  | 'capturing'
  | 'done';

export interface UserActionRecord {
  type: 'destination_info' | 'payment_qr';
  destination_info?: {
    url_address: string;
    domain: string;
    http_method: 'GET' | 'POST';
    additional_params: Record<string, string>;
    extra_params: Record<string, string>;
  };
  payment_qr?: { qr_data: { qr_content: string; qr_image: string } };
}

export interface RefundRecord {
  id: string;
  status: RefundStatus;
  chargeback: boolean;
  createdAt: string;
  completedAt?: string;
  sum: Money;
  extraInfo?: unknown;
  transactionInfo?: Record<string, string>;
}

interface OperationBase {
  id: string;
  sessionId: string;
  status: OperationStatus;
  stage: Stage;
  createdAt: string;
  completedAt?: string;
  instrument: Instrument;
  sum: Money;
  echo: Echo;
  transactionInfo?: Record<string, string>;
  error?: ErrorInfo;
  /** id of the scheduled expiry of a payer action (QR, 3-DS); not rendered */
  expiryJob?: string;
}

export interface PaymentRecord extends OperationBase {
  kind: 'payment';
  /** minor units frozen on the payer's side and not yet captured or released */
  held: number;
  captured: number;
  /** the amount the partner finalized (hold projects), until the capture step charges it */
  finalized?: number;
  userAction?: UserActionRecord;
  /** id of the 3-D Secure challenge while one is open */
  challengeId?: string;
  recurringToken?: string;
  moneyback: RefundRecord[];
  /** the payer's phone after an FPS payment, shown masked */
  payerPhone?: string;
  /** set when the payment came from the payment-form widget */
  viaWidget?: boolean;
}

export interface PayoutRecord extends OperationBase {
  kind: 'payout';
  identityCheck: boolean;
}

export type OperationRecord = PaymentRecord | PayoutRecord;

/** Fields given at transaction/initiate (instruments already resolved), merged into start/checkout or start/transfer. */
export interface InitiateDraft {
  payment?: Instrument;
  payout?: Instrument;
  sum_info?: Money;
  user_info?: Record<string, unknown>;
  participant_info?: Record<string, unknown>;
  payment_settings?: Record<string, unknown>;
  extra_info?: unknown;
}

export interface SessionRecord {
  id: string;
  projectId: string;
  submerchantId?: string;
  createdAt: string;
  updatedAt: string;
  /** the parsed initiate request; start/* merges into it */
  draft: InitiateDraft;
  payments: PaymentRecord[];
  payouts: PayoutRecord[];
  /** partner decisions with their times: approve, finalize, cancel */
  actions: Record<string, string>;
  transactionInfo?: Record<string, string>;
}
