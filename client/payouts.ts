/**
 * Several payouts in one session (common/payouts.ts): a batch opens a session with all of them, and a
 * payout added later joins a payout session that has not ended. The session's workflow sends them one
 * at a time, each with its own approval and result; the same reference is the same payout.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { addPayoutUpdate, type PayoutRequest, type PayoutResult } from '../common/messages';
import { latestRun, updateOutlivedRun } from '../platform/session-runs';
import type { Money, SessionView } from '../common/views';
import { storedStates } from '../store/sessions';
import type { ClientContext } from './context';
import { parse } from './context';
import { fromWorkflowFailure, SessionNotFoundError, SessionStateError } from './errors';
import * as inputs from './inputs';
import * as bodies from './provider-bodies';
import { readSession, started, type Started } from './reads';
import { startSession, type StartOptions } from './starter';
import type { PayoutOrder } from '../common/session-input';

type SessionPayout = ReturnType<typeof inputs.sessionPayoutInput.parse>;

/** What the workflow is asked to send for one payout: its money and its start/transfer body. */
function requestOf(p: SessionPayout): PayoutRequest {
  return {
    reference: p.reference,
    money: p.amount,
    body: bodies.sessionPayoutStart(p.amount, p.destination, p),
  };
}

export class Payouts {
  constructor(private readonly ctx: ClientContext) {}

  /** A session of several payouts, sent in the order given; the session ends once every one has. */
  async startBatch(input: inputs.PayoutBatchInput, o: StartOptions = {}): Promise<Started<SessionView>> {
    const i = parse(inputs.payoutBatchInput, input);
    const addedAt = new Date().toISOString();
    const payouts: PayoutOrder[] = i.payouts.map((p) => ({ ...requestOf(p), addedAt }));
    const total: Money = {
      amount: payouts.reduce((n, p) => n + p.money.amount, 0),
      currency: payouts[0]!.money.currency,
    };
    return startSession(
      this.ctx,
      {
        kind: 'payout',
        reference: i.reference,
        ...this.ctx.projectOf('payout'),
        ...(i.settings ? { settings: i.settings } : {}),
        ...(i.submerchantId ? { submerchantId: i.submerchantId } : {}),
        money: total,
        open: { by: 'initiate', body: bodies.initiateBody(undefined, i) },
        start: { by: 'queue' },
        payouts,
        fingerprintOf: i,
      },
      o,
    );
  }

  /**
   * Adds a payout to a payout session that has not ended (answered at once: it is sent once the payouts
   * before it have ended). The same reference again answers the same payout (created false).
   */
  async add(sessionId: string, input: inputs.SessionPayoutInput): Promise<Started<SessionView>> {
    const args: [PayoutRequest] = [requestOf(parse(inputs.sessionPayoutInput, input))];
    let result: PayoutResult | undefined;
    // A run may continue as new between the look and the Update: look again (bounded).
    for (let tries = 0; !result; tries++) {
      const run = await latestRun(this.ctx.temporal, sessionId, storedStates(this.ctx.store));
      if (run.status === 'unknown') throw new SessionNotFoundError(sessionId);
      if (run.status === 'closed') throw await this.refusal(sessionId);
      try {
        result = await run.handle.executeUpdate(addPayoutUpdate, { args });
      } catch (err) {
        if ((err instanceof WorkflowNotFoundError || updateOutlivedRun(err)) && tries < 2) continue;
        const mapped = fromWorkflowFailure(err, sessionId);
        if (mapped) throw mapped;
        // An Update the workflow has no handler for fails untyped: only payout sessions take payouts.
        if (err instanceof WorkflowUpdateFailedError) throw await this.refusal(sessionId);
        throw err;
      }
    }
    return started(result.session, result.created);
  }

  /** Why a session takes no payout: not a payout session, or it has ended. */
  private async refusal(sessionId: string): Promise<Error> {
    const view = await readSession(this.ctx, sessionId);
    if (view.kind !== 'payout')
      return new SessionStateError(`a ${view.kind} session takes no payout`, 'not_accepted');
    return new SessionStateError(
      `the session has ended (${view.phase}); another payout needs a session of its own`,
      'session_final',
    );
  }
}
