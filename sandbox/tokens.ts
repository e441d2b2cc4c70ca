import type { FundingSource } from './model';

/** Recurring tokens and public tokens (spec: recurring_token_info, public_token). */

export interface RecurringTokenRecord {
  token: string;
  /** the project it was obtained on: payments use it only there, payouts from any project (rule 8) */
  projectId: string;
  source: FundingSource;
  active: boolean;
  createdAtMs: number;
  /** informational expiry, never enforced */
  expiresAtMs: number;
}

export interface PublicTokenRecord {
  token: string;
  projectId: string;
  createdAtMs: number;
  expiresAtMs: number;
  /** set by the one operation the token allows */
  usedAtMs?: number;
  cardTokenize?: { allowTokenization: boolean; lang?: string };
  paymentForm?: { sessionId: string; showAutopayOption: boolean; lang?: string };
  fpsWidget?: Record<string, unknown>;
}

export class TokenStore {
  readonly recurring = new Map<string, RecurringTokenRecord>();
  readonly publicTokens = new Map<string, PublicTokenRecord>();
  /** payment_form_config.session_id values already used (rule 1) */
  readonly paymentFormSessions = new Map<string, string>();
}
