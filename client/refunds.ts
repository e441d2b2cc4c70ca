/**
 * Refunds of a successful payment, as operations of its session
 * (docs/decisions/012-the-session-is-one-resource.md): an Update on the session's running workflow, or, once
 * it has closed, on a new run that carries the session on. The workflow bounds each by what is left (captured
 * less refunds and chargebacks) and carries them out one at a time, so concurrent refunds never exceed it;
 * the same reference is the same refund.
 */
import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { isPaymentKind, PAYMENT_KINDS, workflowOf } from '../common/kinds';
import { refundUpdate, type RefundRequest, type RefundResult } from '../common/messages';
import { latestRun, reopenOptions, updateOutlivedRun } from '../platform/session-runs';
import type { SessionView } from '../common/views';
import { storedStates } from '../store/sessions';
import type { ClientContext } from './context';
import { parse } from './context';
import { fromWorkflowFailure, SessionNotFoundError, SessionStateError } from './errors';
import * as inputs from './inputs';
import { awaitSession, readSession, started, type Started } from './reads';

export class Refunds {
  constructor(private readonly ctx: ClientContext) {}

  /** Answers once the provider has taken the refund; `waitMs` then waits for its result too. */
  async create(
    sessionId: string,
    input: inputs.RefundRequestInput,
    o: { waitMs?: number } = {},
  ): Promise<Started<SessionView>> {
    const i = parse(inputs.refundInput, input);
    const args: [RefundRequest] = [
      {
        reference: i.reference,
        ...(i.amount !== undefined ? { amount: i.amount } : {}),
        ...(i.extraInfo !== undefined ? { extraInfo: i.extraInfo } : {}),
      },
    ];
    let result: RefundResult | undefined;
    // A run may close (or continue as new) between the look and the Update: look again (bounded).
    for (let tries = 0; !result; tries++) {
      const run = await latestRun(this.ctx.temporal, sessionId, storedStates(this.ctx.store));
      if (run.status === 'unknown') throw new SessionNotFoundError(sessionId);
      try {
        result =
          run.status === 'running'
            ? await run.handle.executeUpdate(refundUpdate, { args })
            : await this.ctx.temporal.workflow.executeUpdateWithStart(refundUpdate, {
                args,
                startWorkflowOperation: new WithStartWorkflowOperation(
                  workflowOf(run.state.kind),
                  reopenOptions(run.state, this.ctx.taskQueue),
                ),
              });
      } catch (err) {
        if ((err instanceof WorkflowNotFoundError || updateOutlivedRun(err)) && tries < 2) continue;
        const mapped = fromWorkflowFailure(err, sessionId);
        if (mapped) throw mapped;
        // An Update the workflow has no handler for fails untyped: only payment kinds take refunds.
        if (err instanceof WorkflowUpdateFailedError) {
          const { kind } = await readSession(this.ctx, sessionId);
          if (!isPaymentKind(kind))
            throw new SessionStateError(
              `a ${kind} session takes no refund (only ${PAYMENT_KINDS.join(', ')} do)`,
              'not_accepted',
            );
        }
        throw err;
      }
    }
    const refund = result.session.refunds.find((r) => r.reference === i.reference);
    const view =
      o.waitMs && refund?.status === 'processing'
        ? await this.untilRefundEnds(sessionId, i.reference, result.session.version, o.waitMs)
        : result.session;
    return started(view, result.created);
  }

  private async untilRefundEnds(
    sessionId: string,
    reference: string,
    version: number,
    waitMs: number,
  ): Promise<SessionView> {
    const deadline = Date.now() + waitMs;
    let view: SessionView | undefined;
    for (let after = version; Date.now() < deadline; after = view.version) {
      view = await awaitSession(this.ctx, sessionId, {
        afterVersion: after,
        timeoutMs: deadline - Date.now(),
      });
      const status = view.refunds.find((r) => r.reference === reference)?.status;
      if (status !== 'processing' || view.version === after) break;
    }
    return view ?? awaitSession(this.ctx, sessionId, { timeoutMs: 0 });
  }
}
