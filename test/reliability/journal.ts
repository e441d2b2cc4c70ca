/**
 * What the partner (the suite) did and heard during a run: per session and subscription of the plan, every
 * create, decision, refund and payer action with the API's answers. The verdict reads it next to the
 * provider's truth.
 */
import type { DecisionPlan, SessionPlan, SubscriptionPlan } from './plan';

/** One answer of the API (or none): the status and the error code, or the network error. */
export interface Answer {
  at: number;
  status?: number;
  code?: string;
  network?: string;
}

export interface DecisionRecord {
  plan: DecisionPlan;
  answers: Answer[];
  /**
   * carried_out: 200 (the provider's result); accepted: 202 (still under way, will be carried out);
   * refused: a 4xx with its code; gave_up: only 5xx or no answer while the partner's patience lasted;
   * skipped: the session ended (or never existed) before the moment came.
   */
  outcome?: 'carried_out' | 'accepted' | 'refused' | 'gave_up' | 'skipped';
  code?: string;
  /** The phase the session showed when the decision was sent. */
  phaseWhenSent?: string;
}

export interface RefundRecord {
  reference: string;
  amount?: number;
  answers: Answer[];
  outcome?: 'taken' | 'refused' | 'gave_up' | 'skipped';
  code?: string;
}

export interface SessionRecord {
  plan: SessionPlan;
  /** Every session id an answer named for this reference (one, or paysaga broke "same reference, same session"). */
  sessionIds: string[];
  createAnswers: Answer[];
  /** The create was answered with a session (201 or 200). */
  created: boolean;
  /** Why nothing (more) was done. */
  note?: string;
  decisions: DecisionRecord[];
  refunds: RefundRecord[];
  payer: string[];
  /** The repeat of the same create: the session it named. */
  repeatedAs?: string;
}

export interface SubscriptionRecord {
  plan: SubscriptionPlan;
  subscriptionId?: string;
  answers: Answer[];
  note?: string;
  canceled?: boolean;
}

export interface Journal {
  sessions: SessionRecord[];
  subscriptions: SubscriptionRecord[];
  /** Every API answer by route and status (`POST /v1/checkouts 201`), network errors as `network`. */
  answers: Map<string, number>;
  /** Answers of 500 (a bug in paysaga, whatever the faults). */
  internalErrors: string[];
}

export function newJournal(sessions: SessionPlan[], subscriptions: SubscriptionPlan[]): Journal {
  return {
    sessions: sessions.map((plan) => ({
      plan,
      sessionIds: [],
      createAnswers: [],
      created: false,
      decisions: [],
      refunds: [],
      payer: [],
    })),
    subscriptions: subscriptions.map((plan) => ({ plan, answers: [] })),
    answers: new Map(),
    internalErrors: [],
  };
}
