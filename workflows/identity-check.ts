/**
 * FPS identity check of a payout recipient: no charge and no approve step; the session completes
 * when the recipient is registered in FPS and is canceled otherwise (spec, Endpoints rule 5).
 *
 * sbp/identity_check takes no idempotency key, so one intake workflow per caller reference (its id
 * is the lock) makes the provider call once and starts the session's workflow; repeats and
 * concurrent requests with that reference get the intake's result instead of a second check.
 */
import * as wf from '@temporalio/workflow';
import { sessionSearchAttributes } from '../common/search-attributes';
import { runOperation } from './payment-process';
import { provider } from './session-run';
import { closeSession, guarded, openSession } from './session-lifecycle';
import { failureReason, phaseOf } from './snapshot';
import type {
  IdentityCheckIntakeInput,
  IdentityCheckIntakeResult,
  SessionInput,
  SessionPhase,
  SessionResult,
} from './types';

export async function identityCheckIntakeWorkflow(
  input: IdentityCheckIntakeInput,
): Promise<IdentityCheckIntakeResult> {
  const { fingerprint } = input;
  let session;
  try {
    session = await provider.requestIdentityCheck(input.request);
  } catch (err) {
    const refused = finalRefusal(err);
    if (!refused) throw err;
    return { fingerprint, refused };
  }
  const sessionInput: SessionInput = {
    sessionId: session.id,
    kind: 'identity_check',
    reference: input.reference,
    start: { by: 'provider' },
    settings: input.settings,
    initialSnapshot: session,
  };
  // Abandoned on purpose: the check's session outlives this intake, which ends once it has started.
  await wf.startChild(identityCheckWorkflow, {
    workflowId: session.id,
    args: [sessionInput],
    parentClosePolicy: wf.ParentClosePolicy.ABANDON,
    typedSearchAttributes: sessionSearchAttributes({
      kind: 'identity_check',
      status: 'starting',
      reference: input.reference,
    }),
  });
  return { fingerprint, sessionId: session.id };
}

/** The provider's answer that asking again cannot change (a retryable one fails the intake instead). */
function finalRefusal(err: unknown) {
  if (!(err instanceof wf.ActivityFailure) || !(err.cause instanceof wf.ApplicationFailure)) return undefined;
  const failure = err.cause;
  if (!failure.nonRetryable || !failure.type?.startsWith('ProviderError:')) return undefined;
  const d = (failure.details?.[0] ?? {}) as {
    endpoint?: string;
    errorCode?: string;
    description?: string;
    httpStatus?: number | null;
  };
  return {
    endpoint: d.endpoint ?? 'sbp/identity_check',
    errorCode: d.errorCode ?? failure.type.slice('ProviderError:'.length),
    description: d.description ?? failure.message,
    ...(d.httpStatus ? { httpStatus: d.httpStatus } : {}),
  };
}

/** Confirmed automatically: a pending check waits for the provider, not for the partner. */
function identityPhase(p: SessionPhase): SessionPhase {
  if (p === 'awaiting_approval') return 'processing';
  // The spec's wording: an unregistered recipient cancels the session (it is not a failed payout).
  return p === 'failed' ? 'canceled' : p;
}

export async function identityCheckWorkflow(input: SessionInput): Promise<SessionResult> {
  const run = openSession({ ...input, money: undefined }, { phaseFn: (s) => identityPhase(phaseOf(s)) });
  await guarded(run, () => runOperation(run));
  if (run.phase !== 'succeeded' && !run.reason) {
    const code = failureReason(run.snapshot) ?? 'recipient_not_registered';
    run.reason =
      code === 'recipient_not_registered'
        ? 'recipient_not_registered: the phone number is not registered in FPS'
        : `identity_check_failed: ${code}`;
  }
  return closeSession(run);
}
