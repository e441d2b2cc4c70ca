/** The contract of an event (common/events.ts), checked before it is stored. */
import { eventId, isEventType, type PaysagaEvent } from './events';
import { EVENT_SUBJECT_PATTERN } from './event-delivery';

/** The event breaks the contract of common/events.ts: sending it again cannot help. */
export class InvalidEventError extends Error {
  override name = 'InvalidEventError';
}

/** Why `event` is not a valid PaysagaEvent, or undefined when it is. */
export function eventProblem(event: PaysagaEvent): string | undefined {
  if (!event || typeof event !== 'object') return 'an event is an object';
  if (event.session_id !== undefined && event.subscription_id !== undefined)
    return 'an event names a session_id or a subscription_id, not both';
  const subject = event.session_id ?? event.subscription_id;
  if (typeof subject !== 'string' || !EVENT_SUBJECT_PATTERN.test(subject))
    return 'session_id or subscription_id: a session or subscription id';
  if (!isEventType(event.type)) return `type: not an event type (${String(event.type)})`;
  if (event.session_id !== undefined && !event.type.startsWith('session.'))
    return `type: ${event.type} is not a session event`;
  if (event.subscription_id !== undefined && !event.type.startsWith('subscription.'))
    return `type: ${event.type} is not a subscription event`;
  if (!Number.isSafeInteger(event.sequence) || event.sequence < 1) return 'sequence: a whole number from 1';
  if (event.id !== eventId(subject, event.sequence))
    return `id: must be ${eventId(subject, event.sequence)} (evt_<subject>_<sequence>)`;
  if (typeof event.created !== 'string' || Number.isNaN(Date.parse(event.created)))
    return 'created: an ISO time';
  return undefined;
}
