/**
 * Starting a session by its reference (DESIGN decisions 1, 2, 11): one Update-with-Start on the
 * reference's workflow (`ref-<reference>`) opens the provider session once and starts the session's
 * workflow, or answers the session an earlier request opened; a request with another fingerprint under the
 * same reference is refused. Card data then goes to the provider from here, never through Temporal: the
 * session holds the start open for this request (claimStart), and hears the provider's answer
 * (reportStart), which also waits for the payer's action when asked to (early return).
 */
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import {
  claimStartUpdate,
  registrationUpdate,
  reportStartUpdate,
  type StartReport,
} from '../common/messages';
import { mergeSettings, type SettingsOverrides } from '../common/settings';
import {
  referenceWorkflowId,
  type ReferenceInput,
  type SessionRequest,
  type StartSpec,
} from '../common/session-input';
import type { SessionKind } from '../common/kinds';
import type { Money, SessionView } from '../common/views';
import { deriveIdempotencyKey, ProviderError, scrubCardData } from '../provider';
import type { SessionInfo } from '../provider/schemas';
import type { referenceWorkflow } from '../workflows/reference';
import type { ClientContext } from './context';
import { fromWorkflowFailure, ReferenceConflictError, SessionStateError } from './errors';
import { requestFingerprint } from './fingerprint';
import { awaitSession, started, type Started } from './reads';

export interface StartOptions {
  /** Wait up to this long for the payer's action (3-DS, QR), a decision point or a result before answering. */
  waitMs?: number;
  /** Names this request among repeats of it (the one that creates the session hears `created`). */
  requestId?: string;
}

/** A card the starter sends itself: the start/checkout (or start/transfer) call with its key. */
export type SendCard = (
  sessionId: string,
  key: string,
  returnUrl: string | undefined,
) => Promise<{ session_info: SessionInfo }>;

export interface SessionSpec {
  kind: SessionKind;
  reference: string;
  money?: Money;
  backUrl?: string;
  submerchantId?: string;
  settings?: SettingsOverrides;
  open: ReferenceInput['open'];
  start: StartSpec;
  qrRenewals?: number;
  /** What makes the request itself (cards masked): a repeat must match it. */
  fingerprintOf: unknown;
  card?: SendCard;
}

export async function startSession(
  ctx: ClientContext,
  spec: SessionSpec,
  o: StartOptions = {},
): Promise<Started<SessionView>> {
  const requestId = o.requestId ?? randomUUID();
  const fingerprint = requestFingerprint({ kind: spec.kind, request: spec.fingerprintOf });
  const request: SessionRequest = {
    ...(spec.money ? { money: spec.money } : {}),
    ...(spec.backUrl ? { backUrl: spec.backUrl } : {}),
    ...(spec.submerchantId ? { submerchantId: spec.submerchantId } : {}),
  };
  const input: ReferenceInput = {
    reference: spec.reference,
    fingerprint,
    requestId,
    open: spec.open,
    session: {
      kind: spec.kind,
      reference: spec.reference,
      request,
      start: spec.start,
      settings: mergeSettings(ctx.settings, spec.settings),
      ...(spec.qrRenewals ? { qrRenewals: spec.qrRenewals } : {}),
    },
    keepMs: ctx.keepReferencesMs,
  };
  let registration;
  try {
    registration = await ctx.temporal.workflow.executeUpdateWithStart(registrationUpdate, {
      args: [{ requestId }],
      startWorkflowOperation: new WithStartWorkflowOperation<typeof referenceWorkflow>('referenceWorkflow', {
        workflowId: referenceWorkflowId(spec.reference),
        taskQueue: ctx.taskQueue,
        args: [input],
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        // A reference whose provider session was refused may be used again (a corrected request).
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      }),
    });
  } catch (err) {
    throw fromWorkflowFailure(err, spec.reference) ?? err;
  }
  if (registration.fingerprint !== fingerprint)
    throw new ReferenceConflictError('already used for another request (a repeat must be the same request)');
  const wait = { timeoutMs: o.waitMs ?? 0, until: 'progress' as const };
  const view = spec.card
    ? await sendCard(ctx, registration.sessionId, registration.created, spec.card, wait)
    : await awaitSession(ctx.temporal, registration.sessionId, wait);
  return started(view, registration.created);
}

async function sendCard(
  ctx: ClientContext,
  sessionId: string,
  created: boolean,
  send: SendCard,
  wait: { timeoutMs: number; until: 'progress' },
): Promise<SessionView> {
  const handle = ctx.temporal.workflow.getHandle(sessionId);
  if (!created) {
    // A repeat: the card goes only while the start is still open (the first request may have died
    // before sending it); otherwise the session is answered as it is.
    try {
      await handle.executeUpdate(claimStartUpdate);
    } catch (err) {
      const e = fromWorkflowFailure(err, sessionId);
      if (e instanceof SessionStateError || err instanceof WorkflowNotFoundError)
        return awaitSession(ctx.temporal, sessionId, wait);
      throw e ?? err;
    }
  }
  let report: StartReport;
  try {
    const answer = await send(sessionId, deriveIdempotencyKey(sessionId, 'start'), ctx.returnUrl(sessionId));
    report = { snapshot: scrubCardData(answer.session_info), wait };
  } catch (err) {
    if (!(err instanceof ProviderError) || err.retryable) throw err;
    report = {
      refused: {
        endpoint: err.endpoint,
        errorCode: err.errorCode,
        description: err.description,
        ...(err.httpStatus ? { httpStatus: err.httpStatus } : {}),
      },
      wait,
    };
  }
  try {
    return await handle.executeUpdate(reportStartUpdate, { args: [report] });
  } catch (err) {
    throw fromWorkflowFailure(err, sessionId) ?? err;
  }
}
