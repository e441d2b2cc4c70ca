/**
 * paysaga owns its references (docs/decisions/011-paysaga-owns-its-references.md): one workflow per
 * reference, id `ref-<reference>`, opens the provider session once (transaction/initiate, or
 * sbp/identity_check, which takes no key: the workflow id is the lock), starts the session's workflow (id =
 * session id), and then keeps the reference for `keepMs`: the same request at any time meanwhile answers the
 * same session and moves no money, whatever the provider's 24-hour idempotency keys have forgotten. A request
 * with another fingerprint under the same reference is refused by the caller (it compares fingerprints).
 *
 *   open the provider session -> start the session's workflow -> keep the reference
 *
 * Updates: registration (waits until the session exists; says whether the asking request created it).
 * A provider refusal fails the workflow, so the reference may be used again with a corrected request.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import { workflowOf } from '../common/kinds';
import { FAILURE_TYPES, failureOf, providerRefused, type ProviderRefusal } from '../common/failures';
import { registrationUpdate, sessionOpenedSignal } from '../common/messages';
import { checkArgument, registrationRequest } from '../common/message-schemas';
import { NeedsAttention, sessionSearchAttributes } from '../common/search-attributes';
import { INIT_CHECKOUT_RESEND_WITHIN_MS, type ReferenceInput } from '../common/session-input';
import type { Opened } from '../activities/types';
import { intake, untilAnswered } from './calls';
import { HISTORY_LIMITS, historyLong } from './history';

export interface ReferenceCarried {
  sessionId: string;
  keepUntil: number;
}

export async function referenceWorkflow(input: ReferenceInput, carried?: ReferenceCarried): Promise<void> {
  let sessionId = carried?.sessionId;
  let refusal: ProviderRefusal | undefined;
  wf.setHandler(
    registrationUpdate,
    async ({ requestId }) => {
      await wf.condition(() => sessionId !== undefined || refusal !== undefined);
      if (refusal) throw providerRefused(refusal);
      return {
        sessionId: sessionId!,
        fingerprint: input.fingerprint,
        created: requestId === input.requestId,
      };
    },
    { validator: (arg) => void checkArgument(registrationRequest, arg) },
  );

  if (!sessionId) {
    try {
      const opened = await openSession(input);
      await startSession(input, opened);
      sessionId = opened.session.id;
      if (input.notify)
        await wf
          .getExternalWorkflowHandle(input.notify)
          .signal(sessionOpenedSignal, { reference: input.reference, sessionId })
          .catch(() => undefined);
    } catch (err) {
      const f = failureOf(err);
      if (f?.type !== FAILURE_TYPES.providerRefused) throw err;
      refusal = f.details as ProviderRefusal;
      await wf.condition(wf.allHandlersFinished);
      throw providerRefused(refusal);
    }
  }

  const keepUntil = carried?.keepUntil ?? Date.now() + input.keepMs;
  while (Date.now() < keepUntil) {
    const long = await wf.condition(() => historyLong(HISTORY_LIMITS.reference), keepUntil - Date.now());
    if (long) {
      await wf.condition(wf.allHandlersFinished);
      await wf.continueAsNew<typeof referenceWorkflow>(input, { sessionId, keepUntil });
    }
  }
}

/** The provider session for the reference: asked until the provider answers (or refuses). */
async function openSession(input: ReferenceInput): Promise<Opened> {
  const { submerchantId, projectId } = input.session.request;
  const extra = { ...(submerchantId ? { submerchantId } : {}), ...(projectId ? { projectId } : {}) };
  let troubled = false;
  const keyed = { reference: input.reference, fingerprint: input.fingerprint, ...extra };
  const open = input.open;
  const firstTry = Date.now();
  const session = await untilAnswered(
    () => {
      switch (open.by) {
        case 'initiate':
          return intake.initiate({ ...keyed, body: open.body });
        case 'init_checkout':
          return intake.initCheckout({ ...keyed, body: open.body });
        case 'init_transfer':
          return intake.initTransfer({ ...keyed, body: open.body });
        case 'identity_check':
          return intake.requestIdentityCheck({ body: open.body, ...extra });
      }
    },
    {
      pauseMs: 2_000,
      maxMs: 60_000,
      onTrouble: (message) => {
        wf.log.warn('reference: the provider session could not be opened yet', {
          reference: input.reference,
          message,
        });
        if (!troubled) wf.upsertSearchAttributes([{ key: NeedsAttention, value: true }]);
        troubled = true;
      },
      between: async () => {
        // Past the key's life a resend could charge again: the reference waits, needing attention, for an
        // operator (the provider's records say whether the payment exists).
        if (open.by === 'initiate' || open.by === 'identity_check') return;
        if (Date.now() - firstTry < INIT_CHECKOUT_RESEND_WITHIN_MS) return;
        wf.log.error('reference: init/checkout unanswered for 23 hours; not sent again (its key expires)', {
          reference: input.reference,
        });
        await wf.condition(() => false);
      },
    },
  );
  if (troubled) wf.upsertSearchAttributes([{ key: NeedsAttention, value: false }]);
  return session;
}

/** Abandoned on purpose: the session outlives this workflow's runs. Started once whatever re-runs. */
async function startSession(input: ReferenceInput, { session, returnUrl }: Opened): Promise<void> {
  const { kind, reference, request } = input.session;
  try {
    await wf.startChild(workflowOf(kind), {
      workflowId: session.id,
      args: [
        {
          ...input.session,
          sessionId: session.id,
          initialSnapshot: session,
          request: { ...request, ...(returnUrl ? { returnUrl } : {}) },
        },
      ],
      parentClosePolicy: wf.ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: wf.WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: sessionSearchAttributes({
        kind,
        status: 'starting',
        reference,
        createdAt: new Date(Date.now()),
        ...(request.money ? { amount: request.money.amount, currency: request.money.currency } : {}),
      }),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
