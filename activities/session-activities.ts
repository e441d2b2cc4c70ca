import { Context } from '@temporalio/activity';
import { ProviderOutcomeUnknownError, deriveIdempotencyKey, type ProviderClient } from '../provider';
import type { SessionInfo } from '../provider/schemas';
import { scrubCardData, toFailure } from './failures';
import { stepTookEffect } from './reconcile';
import type { SessionActivities } from './types';

function log() {
  try {
    return Context.current().log;
  } catch {
    return undefined;
  }
}

/**
 * Thin wrappers over the provider client. Every money-moving call carries the key of
 * (session id = workflow id, step); an unknown outcome is checked against transaction/state
 * before the call is sent again.
 */
export function createSessionActivities(provider: ProviderClient): SessionActivities {
  async function state(sessionId: string): Promise<SessionInfo> {
    return (await provider.state({ session_id: sessionId })).session_info;
  }

  async function moneyMoving(
    sessionId: string,
    step: string,
    send: (key: string) => Promise<{ session_info: SessionInfo }>,
  ): Promise<SessionInfo> {
    const key = deriveIdempotencyKey(sessionId, step);
    try {
      return scrubCardData((await send(key)).session_info);
    } catch (err) {
      if (err instanceof ProviderOutcomeUnknownError) {
        const truth = await state(sessionId).catch(() => undefined);
        const done = truth ? stepTookEffect(step, truth) : undefined;
        log()?.warn('provider outcome unknown; reconciled with transaction/state', {
          sessionId,
          step,
          tookEffect: done ?? 'unknown',
        });
        if (truth && done) return scrubCardData(truth);
      }
      throw toFailure(err);
    }
  }

  return {
    startOperation: (sessionId, operation, body, step) =>
      moneyMoving(sessionId, step, (key) =>
        operation === 'checkout'
          ? provider.startCheckout({ ...body, session_id: sessionId }, { idempotencyKey: key })
          : provider.startTransfer({ ...body, session_id: sessionId }, { idempotencyKey: key }),
      ),

    decide: (sessionId, decision, step, amount) =>
      moneyMoving(sessionId, step, (key) => {
        if (decision === 'finalize') {
          const sum_info = amount ? { sum: amount.amount, currency_code: amount.currency } : undefined;
          return provider.finalize(
            { session_id: sessionId, ...(sum_info ? { sum_info } : {}) },
            { idempotencyKey: key },
          );
        }
        return provider[decision]({ session_id: sessionId }, { idempotencyKey: key });
      }),

    refund: (sessionId, step, amount) =>
      moneyMoving(sessionId, step, (key) =>
        provider.refund(
          {
            session_id: sessionId,
            ...(amount ? { sum_info: { sum: amount.amount, currency_code: amount.currency } } : {}),
          },
          { idempotencyKey: key },
        ),
      ),

    requestIdentityCheck: async (body) => {
      try {
        return scrubCardData((await provider.identityCheck(body)).session_info);
      } catch (err) {
        throw toFailure(err);
      }
    },

    getState: async (sessionId) => {
      try {
        return scrubCardData(await state(sessionId));
      } catch (err) {
        throw toFailure(err);
      }
    },

    createPaymentFormToken: async (sessionId, widget) => {
      try {
        const res = await provider.publicToken({
          payment_form_config: {
            session_id: sessionId,
            ...(widget.showAutopayOption !== undefined
              ? { show_autopay_option: widget.showAutopayOption }
              : {}),
            ...(widget.lang ? { lang: widget.lang } : {}),
          },
        });
        return res.public_token;
      } catch (err) {
        throw toFailure(err);
      }
    },
  };
}
