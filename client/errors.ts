/**
 * What the client throws: each class says what went wrong in the caller's terms and maps to one HTTP
 * status (api/errors.ts). Failures raised on purpose by workflows (common/failures.ts) are mapped by their
 * type in `fromWorkflowFailure`, never by their message.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { z } from 'zod';
import {
  FAILURE_TYPES,
  failureOf,
  type ConflictDetails,
  type FieldRule,
  type ProviderRefusal,
  type StateConflictCode,
} from '../common/failures';
import { innermostIssue } from '../provider/schemas/validation';

/** A request to paysaga that fails validation: nothing was started or changed (400). */
export class InputValidationError extends Error {
  constructor(readonly fields: FieldRule[]) {
    super(`invalid input: ${fields.map((f) => `${f.field}: ${f.rule}`).join('; ')}`);
    this.name = 'InputValidationError';
  }
  static fromZod(error: z.ZodError, prefix = ''): InputValidationError {
    return new InputValidationError(
      // A union (card given as an instance or as fields) is named by its deepest issue: card.card_number.
      error.issues.map(innermostIssue).map((i) => ({
        field: [prefix, ...i.path.map(String)].filter(Boolean).join('.') || '(body)',
        rule: i.message,
      })),
    );
  }
}

/** The session does not exist (404). */
export class SessionNotFoundError extends Error {
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} not found`);
    this.name = 'SessionNotFoundError';
  }
}

/** No subscription with this id (`sub-<reference>`): answered like an unknown session (404). */
export class SubscriptionNotFoundError extends SessionNotFoundError {
  constructor(readonly subscriptionId: string) {
    super(subscriptionId);
    this.message = `subscription ${subscriptionId} not found`;
    this.name = 'SubscriptionNotFoundError';
  }
}

/** The request is valid but the session is not where it can be carried out (409); `code` says why. */
export class SessionStateError extends Error {
  constructor(
    message: string,
    readonly code: StateConflictCode = 'invalid_state',
  ) {
    super(message);
    this.name = 'SessionStateError';
  }
}

/** The reference names another request (409 naming `reference`): nothing was started or changed. */
export class ReferenceConflictError extends Error {
  readonly field = 'reference';
  constructor(readonly rule: string) {
    super(`reference: ${rule}`);
    this.name = 'ReferenceConflictError';
  }
}

/**
 * Another request with the same reference is creating it right now (409, retryable): the repeat will
 * answer what that one created once it is done.
 */
export class ReferenceBusyError extends Error {
  readonly field = 'reference';
  constructor() {
    super('reference: another request with this reference is being carried out; retry in a few seconds');
    this.name = 'ReferenceBusyError';
  }
}

/** The provider refused a decision or a refund for good (409, with the provider's code). */
export class ProviderRefusedError extends Error {
  constructor(readonly refusal: ProviderRefusal) {
    super(`the provider refused ${refusal.endpoint}: ${refusal.errorCode}: ${refusal.description}`);
    this.name = 'ProviderRefusedError';
  }
}

/**
 * The client-side error a failed Update (or workflow) stands for, by the failure's type; undefined when
 * it is none of paysaga's own (the caller rethrows the original).
 */
export function fromWorkflowFailure(err: unknown, sessionId: string): Error | undefined {
  if (err instanceof WorkflowNotFoundError) return new SessionNotFoundError(sessionId);
  const f = failureOf(err);
  switch (f?.type) {
    case FAILURE_TYPES.invalidArgument:
      return new InputValidationError([f.details as FieldRule]);
    case FAILURE_TYPES.referenceConflict:
      return new ReferenceConflictError((f.details as FieldRule).rule);
    case FAILURE_TYPES.stateConflict:
      return new SessionStateError(f.message, (f.details as ConflictDetails | undefined)?.code);
    case FAILURE_TYPES.providerRefused:
      return new ProviderRefusedError(f.details as ProviderRefusal);
    default:
      return undefined;
  }
}
