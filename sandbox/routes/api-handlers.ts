import type { z } from 'zod';
import type { EndpointName, Endpoints } from '../../provider/schemas/endpoints';
import { FPS_BANKS } from '../banks';
import type { FlowContext } from '../engine/context';
import { approve, cancel, finalize } from '../engine/decisions';
import { refund } from '../engine/moneyback';
import * as sessions from '../engine/sessions';
import { disableRecurringToken, issuePublicToken, tokenState } from '../engine/tokens';
import type { Money, SessionRecord } from '../model';

/** One handler per endpoint of the spec: parsed request in, the response fields besides `status` out. */
type Handler<N extends EndpointName> = (
  ctx: FlowContext,
  caller: sessions.Caller,
  req: z.output<Endpoints[N]['request']>,
) => Record<string, unknown>;

const sessionInfo = (ctx: FlowContext, session: SessionRecord) => ({
  session_info: ctx.view.session(session),
});

const money = (m: { sum: number; currency_code: string } | undefined): Money | undefined =>
  m ? { sum: m.sum, currency_code: m.currency_code } : undefined;

export const apiHandlers: { [N in EndpointName]: Handler<N> } = {
  publicToken: (ctx, caller, req) => ({ public_token: issuePublicToken(ctx, caller, req) }),
  recurringTokenDisable: (ctx, caller, req) => ({
    recurring_token_info: disableRecurringToken(ctx, caller, req.recurring_token_info.token),
  }),
  initiate: (ctx, caller, req) => sessionInfo(ctx, sessions.initiate(ctx, caller, req)),
  initCheckout: (ctx, caller, req) => sessionInfo(ctx, sessions.initCheckout(ctx, caller, req)),
  initTransfer: (ctx, caller, req) => sessionInfo(ctx, sessions.initTransfer(ctx, caller, req)),
  startCheckout: (ctx, caller, req) => sessionInfo(ctx, sessions.startCheckout(ctx, caller, req)),
  startTransfer: (ctx, caller, req) => sessionInfo(ctx, sessions.startTransfer(ctx, caller, req)),
  approve: (ctx, caller, req) => {
    const session = sessions.findSession(ctx, caller, req.session_id);
    approve(ctx, session);
    return sessionInfo(ctx, session);
  },
  cancel: (ctx, caller, req) => {
    const session = sessions.findSession(ctx, caller, req.session_id);
    cancel(ctx, session);
    return sessionInfo(ctx, session);
  },
  finalize: (ctx, caller, req) => {
    const session = sessions.findSession(ctx, caller, req.session_id);
    finalize(ctx, session, money(req.sum_info));
    return sessionInfo(ctx, session);
  },
  refund: (ctx, caller, req) => {
    const session = sessions.findSession(ctx, caller, req.session_id);
    refund(ctx, session, money(req.sum_info), req.extra_info);
    return sessionInfo(ctx, session);
  },
  state: (ctx, caller, req) => sessionInfo(ctx, sessions.findSession(ctx, caller, req.session_id)),
  publicTokenState: (ctx, caller, req) => ({ token_info: tokenState(ctx, caller, req) }),
  sbpBanks: () => ({ banks: FPS_BANKS.map((b) => ({ ...b })) }),
  identityCheck: (ctx, caller, req) => sessionInfo(ctx, sessions.identityCheck(ctx, caller, req)),
};
