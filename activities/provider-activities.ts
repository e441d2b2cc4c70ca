/**
 * Thin activities over the provider client. Every money-moving call carries the key of (session id,
 * step) (docs/decisions/004-deterministic-idempotency-keys.md); a resend looks at transaction/state first and
 * sends only when the state shows the step has not taken effect, so neither a retry, a restart nor a key the
 * provider has forgotten (24 h) can move money twice. Retries belong to Temporal's policy (visible in
 * history): the worker's provider client does not resend on its own.
 */
import { Context } from '@temporalio/activity';
import { stepName, stepTookEffect, type Step } from '../common/steps';
import {
  deriveIdempotencyKey,
  ProviderOutcomeUnknownError,
  scrubCardData,
  type ProviderClient,
} from '../provider';
import type { SessionInfo } from '../provider/schemas';
import { toFailure } from './failures';

import type { MoneyMovingCall, ProviderActivities, SessionCall } from './types';

type Answer = Promise<{ session_info: SessionInfo }>;

/** The attempt of the running activity (1 outside an activity, e.g. in unit tests). */
function attempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}

function log() {
  try {
    return Context.current().log;
  } catch {
    return undefined;
  }
}

export function createProviderActivities(provider: ProviderClient): ProviderActivities {
  const options = (c: SessionCall, key?: string) => ({
    ...(key ? { idempotencyKey: key } : {}),
    ...(c.submerchantId ? { submerchantId: c.submerchantId } : {}),
    ...(c.projectId ? { projectId: c.projectId } : {}),
  });

  async function state(c: SessionCall): Promise<SessionInfo> {
    return scrubCardData((await provider.state({ session_id: c.sessionId }, options(c))).session_info);
  }

  async function moneyMoving(
    c: MoneyMovingCall,
    step: Step,
    send: (key: string) => Answer,
    known: { knownRefundIds?: readonly string[]; knownPayoutIds?: readonly string[] } = {},
  ): Promise<SessionInfo> {
    const name = stepName(step);
    const key = deriveIdempotencyKey(c.sessionId, name);
    try {
      // A resend: an earlier attempt, run or reset may have sent it; the state decides.
      if (c.verifyFirst || attempt() > 1) {
        const truth = await state(c);
        if (stepTookEffect(step, truth, known)) return truth;
      }
      return scrubCardData((await send(key)).session_info);
    } catch (err) {
      if (err instanceof ProviderOutcomeUnknownError) {
        const truth = await state(c).catch(() => undefined);
        const done = truth ? stepTookEffect(step, truth, known) : undefined;
        log()?.warn('provider outcome unknown; reconciled with transaction/state', {
          sessionId: c.sessionId,
          step: name,
          tookEffect: done ?? 'unknown',
        });
        if (truth && done) return truth;
      }
      throw toFailure(err);
    }
  }

  const reading = async <T>(read: () => Promise<T>): Promise<T> => {
    try {
      return await read();
    } catch (err) {
      throw toFailure(err);
    }
  };

  return {
    startCheckout: (a) =>
      moneyMoving(a, { kind: 'start', n: a.n }, (key) =>
        provider.startCheckout({ ...a.body, session_id: a.sessionId }, options(a, key)),
      ),
    startTransfer: (a) =>
      moneyMoving(a, { kind: 'start', n: 0 }, (key) =>
        provider.startTransfer({ ...a.body, session_id: a.sessionId }, options(a, key)),
      ),
    startPayout: (a) =>
      moneyMoving(
        a,
        { kind: 'payout', reference: a.reference },
        (key) => provider.startTransfer({ ...a.body, session_id: a.sessionId }, options(a, key)),
        { knownPayoutIds: a.knownPayoutIds },
      ),
    approve: (a) =>
      moneyMoving(a, { kind: 'approve', operationId: a.operationId }, (key) =>
        provider.approve({ session_id: a.sessionId }, options(a, key)),
      ),
    cancel: (a) =>
      moneyMoving(a, { kind: 'cancel', operationId: a.operationId }, (key) =>
        provider.cancel({ session_id: a.sessionId }, options(a, key)),
      ),
    finalize: (a) =>
      moneyMoving(a, { kind: 'finalize', operationId: a.operationId }, (key) =>
        provider.finalize(
          {
            session_id: a.sessionId,
            ...(a.amount ? { sum_info: { sum: a.amount.amount, currency_code: a.amount.currency } } : {}),
          },
          options(a, key),
        ),
      ),
    refund: (a) =>
      moneyMoving(
        a,
        { kind: 'refund', reference: a.reference },
        (key) =>
          provider.refund(
            {
              session_id: a.sessionId,
              sum_info: { sum: a.amount.amount, currency_code: a.amount.currency },
              ...(a.extraInfo !== undefined ? { extra_info: a.extraInfo } : {}),
            },
            options(a, key),
          ),
        { knownRefundIds: a.knownRefundIds },
      ),
    getState: (a) => reading(() => state(a)),
    createPaymentFormToken: (a) =>
      reading(async () => {
        const res = await provider.publicToken(
          {
            payment_form_config: {
              session_id: a.sessionId,
              ...(a.widget.showAutopayOption !== undefined
                ? { show_autopay_option: a.widget.showAutopayOption }
                : {}),
              ...(a.widget.lang ? { lang: a.widget.lang } : {}),
            },
          },
          options(a),
        );
        return res.public_token;
      }),
    createFpsWidgetToken: (a) =>
      reading(async () => {
        const res = await provider.publicToken(
          { fps_widget: { session_id: a.sessionId, ...(a.widget.lang ? { lang: a.widget.lang } : {}) } },
          options(a),
        );
        return res.public_token;
      }),
  };
}
