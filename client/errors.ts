import type { z } from 'zod';
import { innermostIssue } from '../provider/schemas/validation';

/** A request to paysaga that fails validation: nothing was started or changed. */
export class InputValidationError extends Error {
  constructor(readonly fields: { field: string; rule: string }[]) {
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

/** The session does not exist (or not for this kind of request). */
export class SessionNotFoundError extends Error {
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} not found`);
    this.name = 'SessionNotFoundError';
  }
}

/** The request is valid but the session is not in a state that allows it. */
export class SessionStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionStateError';
  }
}

/** No subscription with this id (`sub-<reference>`). Answered like an unknown session (404). */
export class SubscriptionNotFoundError extends SessionNotFoundError {
  constructor(readonly subscriptionId: string) {
    super(subscriptionId);
    this.message = `subscription ${subscriptionId} not found`;
    this.name = 'SubscriptionNotFoundError';
  }
}
