/**
 * Starting a session by its reference (docs/decisions/001-one-workflow-per-session.md,
 * 002-card-data-never-enters-temporal.md, 011-paysaga-owns-its-references.md): the reference is claimed in
 * the store (client/references.ts), the provider session opened once (transaction/initiate with a key from
 * the reference and the request's fingerprint, or sbp/identity_check, which takes no key: the claim is the
 * lock), and the session's workflow started under the provider's session id; a repeat answers the session the
 * first request opened; another request under the same reference is refused. Card data then goes to the
 * provider from here, never through Temporal: the session holds the start open for this request (claimStart),
 * and hears the provider's answer (reportStart, a signal); the request then waits for the session's record
 * to show the payer's action or a result when asked to (early return, client/reads.ts).
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { workflowOf, type SessionKind } from '../common/kinds';
import { claimStartUpdate, reportStartSignal, type StartReport } from '../common/messages';
import { sessionSearchAttributes } from '../common/search-attributes';
import { mergeSettings, type SettingsOverrides } from '../common/settings';
import {
  INIT_CHECKOUT_RESEND_WITHIN_MS,
  START_CLAIM_MS,
  type OpenSpec,
  type SessionInput,
  type SessionRequest,
  type StartSpec,
} from '../common/session-input';
import type { Money, SessionView } from '../common/views';
import {
  deriveIdempotencyKey,
  initCheckoutKey,
  initiateKey,
  initTransferKey,
  PaysagaProviderError,
  ProviderError,
  ProviderOutcomeUnknownError,
  scrubCardData,
} from '../provider';
import type { ProviderRefusal } from '../common/failures';
import type { SessionInfo } from '../provider/schemas';
import { findReference } from '../store/references';
import { sessionState } from '../store/sessions';
import type { ClientContext } from './context';
import { fromWorkflowFailure, ProviderRefusedError, SessionStateError } from './errors';
import { requestFingerprint } from './fingerprint';
import { awaitSession, started, type Started } from './reads';
import { openByReference } from './references';
import type { PayoutOrder } from '../common/session-input';

export interface StartOptions {
  /** Wait up to this long for the payer's action (3-DS, QR), a decision point or a result before answering. */
  waitMs?: number;
}

/**
 * A card the starter sends itself: the start/checkout (or start/transfer) call with its key, given up
 * when `signal` aborts (the session's hold on its start is about to end).
 */
export type SendCard = (
  sessionId: string,
  key: string,
  returnUrl: string | undefined,
  signal: AbortSignal,
) => Promise<{ session_info: SessionInfo }>;

export interface SessionSpec {
  kind: SessionKind;
  reference: string;
  money?: Money;
  backUrl?: string;
  submerchantId?: string;
  /** The provider project of this session, when not the default (PAYSAGA_PROJECTS). */
  projectId?: string;
  customerId?: string;
  settings?: SettingsOverrides;
  /** How the provider session is opened (common/session-input.ts OpenSpec). */
  open: OpenSpec;
  start: StartSpec;
  qrRenewals?: number;
  /** A session of several payouts (start `queue`): each one, in the order sent. */
  payouts?: PayoutOrder[];
  /** What makes the request itself (cards masked): a repeat must match it. */
  fingerprintOf: unknown;
  card?: SendCard;
  /** A workflow to signal once the session's result is known (the subscription of a charge). */
  notify?: string;
}

export async function startSession(
  ctx: ClientContext,
  spec: SessionSpec,
  o: StartOptions = {},
): Promise<Started<SessionView>> {
  const { sessionId, created, workflowStartedAt } = await openSession(ctx, spec);
  const wait = { timeoutMs: o.waitMs ?? 0, until: 'progress' as const };
  const view = spec.card
    ? await sendCard(ctx, sessionId, workflowStartedAt, spec.card, wait)
    : await awaitSession(ctx, sessionId, wait);
  return started(view, created);
}

/**
 * The session of the spec's reference: opened now (created) or by an earlier request.
 * `workflowStartedAt`: when this request started the session's workflow (just before it asked), if it
 * did (a request that opens a reference left by one that died after starting it did not, and that
 * workflow may have closed its start since).
 */
export async function openSession(
  ctx: ClientContext,
  spec: SessionSpec,
): Promise<{ sessionId: string; created: boolean; workflowStartedAt?: number }> {
  const fingerprint = requestFingerprint({ kind: spec.kind, request: spec.fingerprintOf });
  let workflowStartedAt: number | undefined;
  const startWorkflow = async (sessionId: string, opened?: SessionInfo) => {
    const at = Date.now();
    if (await startSessionWorkflow(ctx, spec, sessionId, opened)) workflowStartedAt = at;
  };
  const { subjectId, created } = await openByReference(ctx.store, {
    reference: spec.reference,
    kind: spec.kind,
    fingerprint,
    open: async () => {
      if (spec.open.by === 'init_checkout' || spec.open.by === 'init_transfer')
        await refuseExpiredRetry(ctx, spec.reference);
      let session: SessionInfo;
      try {
        session = await openProviderSession(ctx, spec, fingerprint);
      } catch (err) {
        // A refusal for good is the caller's to see as such (400/404/409 by its code); the reference is free
        // again.
        if (err instanceof ProviderError && !err.retryable) throw new ProviderRefusedError(refusalOf(err));
        throw err;
      }
      await startWorkflow(session.id, scrubCardData(session));
      return session.id;
    },
    ensure: async (sessionId) => {
      if (!(await sessionState(ctx.store, sessionId))) await startWorkflow(sessionId);
    },
    refusalOf: (err) => (err instanceof ProviderRefusedError ? err.refusal : undefined),
  });
  return {
    sessionId: subjectId,
    created,
    ...(workflowStartedAt !== undefined ? { workflowStartedAt } : {}),
  };
}

/**
 * init/checkout moves money: a retry after a lost answer is safe only while its key is still valid. A
 * reference first tried more than 23 hours ago and never opened may hold a payment nobody heard of, so
 * it is not sent again (the provider's records tell; a new reference is a new payment).
 */
async function refuseExpiredRetry(ctx: ClientContext, reference: string): Promise<void> {
  const row = await findReference(ctx.store, reference);
  if (row && Date.now() - new Date(row.created_at).getTime() > INIT_CHECKOUT_RESEND_WITHIN_MS)
    throw new SessionStateError(
      'an earlier request under this reference was sent more than 23 hours ago without an answer; its ' +
        'idempotency key has expired, so it is not sent again: check the provider for that payment, then ' +
        'use a new reference',
      'retry_window_passed',
    );
}

function refusalOf(err: ProviderError): ProviderRefusal {
  return {
    endpoint: err.endpoint,
    errorCode: err.errorCode,
    description: err.description,
    ...(err.httpStatus ? { httpStatus: err.httpStatus } : {}),
  };
}

async function openProviderSession(
  ctx: ClientContext,
  spec: SessionSpec,
  fingerprint: string,
): Promise<SessionInfo> {
  const extra = {
    ...(spec.submerchantId ? { submerchantId: spec.submerchantId } : {}),
    ...(spec.projectId ? { projectId: spec.projectId } : {}),
  };
  // Keys from the reference and the request: a retry after an unknown outcome (money moves with the
  // init/* calls) is the same session and the same payment or payout.
  const keyed = (derive: typeof initiateKey) => ({
    idempotencyKey: derive(spec.reference, fingerprint),
    ...extra,
  });
  switch (spec.open.by) {
    case 'initiate':
      return (await ctx.provider.initiate(spec.open.body, keyed(initiateKey))).session_info;
    case 'init_checkout':
      return (await ctx.provider.initCheckout(spec.open.body, keyed(initCheckoutKey))).session_info;
    case 'init_transfer':
      return (await ctx.provider.initTransfer(spec.open.body, keyed(initTransferKey))).session_info;
    case 'identity_check':
      return (await ctx.provider.identityCheck(spec.open.body, extra)).session_info;
  }
}

/**
 * Starts the session's workflow (id = session id) unless one exists or existed: a closed run is never
 * started again from the beginning (its session carries on from the store's record instead). True when
 * this call started it.
 */
async function startSessionWorkflow(
  ctx: ClientContext,
  spec: SessionSpec,
  sessionId: string,
  initialSnapshot?: SessionInfo,
): Promise<boolean> {
  const returnUrl = ctx.returnUrl(sessionId);
  const request: SessionRequest = {
    ...(spec.money ? { money: spec.money } : {}),
    ...(spec.backUrl ? { backUrl: spec.backUrl } : {}),
    ...(spec.submerchantId ? { submerchantId: spec.submerchantId } : {}),
    ...(spec.projectId ? { projectId: spec.projectId } : {}),
    ...(spec.customerId ? { customerId: spec.customerId } : {}),
    ...(returnUrl ? { returnUrl } : {}),
  };
  const input: SessionInput = {
    sessionId,
    kind: spec.kind,
    reference: spec.reference,
    request,
    start: spec.start,
    settings: mergeSettings(ctx.settings, spec.settings),
    ...(spec.qrRenewals ? { qrRenewals: spec.qrRenewals } : {}),
    ...(spec.payouts ? { payouts: spec.payouts } : {}),
    ...(initialSnapshot ? { initialSnapshot } : {}),
    ...(spec.notify ? { notify: spec.notify } : {}),
  };
  try {
    await ctx.temporal.workflow.start(workflowOf(spec.kind), {
      workflowId: sessionId,
      taskQueue: ctx.taskQueue,
      args: [input],
      // Refused when one runs or ran (both say so: this request did not start it).
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      typedSearchAttributes: sessionSearchAttributes({
        kind: spec.kind,
        status: 'starting',
        reference: spec.reference,
        createdAt: new Date(),
        ...(spec.money ? { amount: spec.money.amount, currency: spec.money.currency } : {}),
      }),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    return false;
  }
  return true;
}

/** What a start may take of the session's hold on it: the rest is room for the clocks of two hosts. */
const SEND_WITHIN_MS = START_CLAIM_MS - 15_000;

/**
 * Sends the card to the provider while the session holds its start open for it, and only then: a
 * session that has closed its start (canceled: card data was never submitted) must never get card data
 * afterwards, which would start a payment it no longer follows. A workflow this request started
 * (`startedAt`: before it did) holds the start from its first step; any other (a repeat, a request
 * opening a reference left by one that died), or one started so long ago that little of that hold may
 * be left, is asked first (claimStart, which holds it anew). The call is given up before the hold ends:
 * the session looks at the provider once more when it ends, so a start that got through is seen.
 */
async function sendCard(
  ctx: ClientContext,
  sessionId: string,
  startedAt: number | undefined,
  send: SendCard,
  wait: { timeoutMs: number; until: 'progress' },
): Promise<SessionView> {
  const handle = ctx.temporal.workflow.getHandle(sessionId);
  let heldFrom = startedAt;
  if (heldFrom === undefined || Date.now() - heldFrom > SEND_WITHIN_MS / 2) {
    heldFrom = Date.now();
    try {
      await handle.executeUpdate(claimStartUpdate);
    } catch (err) {
      const e = fromWorkflowFailure(err, sessionId);
      if (e instanceof SessionStateError || err instanceof WorkflowNotFoundError)
        return awaitSession(ctx, sessionId, wait);
      throw e ?? err;
    }
  }
  const signal = AbortSignal.timeout(Math.max(0, heldFrom + SEND_WITHIN_MS - Date.now()));
  let report: StartReport;
  try {
    const key = deriveIdempotencyKey(sessionId, 'start');
    const answer = await send(sessionId, key, ctx.returnUrl(sessionId), signal);
    report = { snapshot: scrubCardData(answer.session_info) };
  } catch (err) {
    if (signal.aborted) {
      // What the provider made of the last attempt is not known; the session's look at its end tells,
      // and a repeat of the request sends again under the same key while the session still waits.
      const endpoint = err instanceof PaysagaProviderError ? err.endpoint : 'start';
      throw new ProviderOutcomeUnknownError(endpoint, "the session's hold on its start is ending");
    }
    if (!(err instanceof ProviderError) || err.retryable) throw err;
    report = { refused: refusalOf(err) };
  }
  try {
    await handle.signal(reportStartSignal, report);
  } catch (err) {
    throw fromWorkflowFailure(err, sessionId) ?? err;
  }
  return awaitSession(ctx, sessionId, wait);
}
