/**
 * Inputs of the event routes (event endpoints, listing and redelivering events), validated with zod
 * like every other input (client/inputs.ts): a bad field is named with its rule, nothing changes.
 */
import { z } from 'zod';
import { EVENT_ID_PATTERN, EVENT_TYPES } from '../common/events';
import { MAX_SECRET_GRACE_MS } from '../common/event-delivery';

const eventType = z.enum(EVENT_TYPES, { error: `one of the event types: ${EVENT_TYPES.join(', ')}` });

export const eventEndpointInput = z.object({
  url: z
    .url({ protocol: /^https?$/, error: 'an http:// or https:// URL' })
    .max(2_048)
    .describe(
      'https:// (http:// only where PAYSAGA_EVENT_ALLOW_HTTP is set) to a host that resolves to public ' +
        'addresses only (else PAYSAGA_EVENT_ALLOW_HOSTS must name it)',
    ),
  /** Omitted: every type, also types added later. */
  events: z
    .array(eventType)
    .min(1, 'at least one event type (omit the field for all)')
    .max(EVENT_TYPES.length, 'each type once')
    .refine((a) => new Set(a).size === a.length, 'each type once')
    .meta({ uniqueItems: true })
    .optional(),
  description: z.string().max(500).optional(),
});
export type EventEndpointInput = z.input<typeof eventEndpointInput>;

export const rotateSecretInput = z.object({
  /** How long the replaced secret still signs (default 24 h, at most 30 days; 0: it stops at once). */
  graceMs: z.number().int().min(0).max(MAX_SECRET_GRACE_MS).optional(),
});
export type RotateSecretInput = z.input<typeof rotateSecretInput>;

export const endpointId = z.string().regex(/^we_[A-Za-z0-9_-]{1,64}$/, 'an event endpoint id (we_...)');
export const eventIdInput = z.string().regex(EVENT_ID_PATTERN, 'an event id (evt_<subject>_<sequence>)');

export const MAX_EVENTS_PER_PAGE = 200;

export const listEventsInput = z
  .object({
    session_id: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,160}$/, 'a session id (ps_...)')
      .optional(),
    subscription_id: z
      .string()
      .regex(/^sub-[A-Za-z0-9._:-]{1,160}$/, 'a subscription id (sub-...)')
      .optional(),
    type: eventType.optional(),
    /** An event id (exclusive: what comes after it) or an ISO time (events created after it). */
    after: z
      .union([eventIdInput, z.iso.datetime({ offset: true }), z.iso.date()], {
        error: 'an event id (evt_...) or an ISO time',
      })
      .optional(),
    /** Stripe's cursors: the page after this event, or the page before it (in the list's order). */
    starting_after: eventIdInput.optional(),
    ending_before: eventIdInput.optional(),
    limit: z.coerce.number().int().min(1).max(MAX_EVENTS_PER_PAGE).default(50),
  })
  .refine((f) => f.session_id === undefined || f.subscription_id === undefined, {
    path: ['subscription_id'],
    message: 'give session_id or subscription_id, not both',
  })
  .refine((f) => [f.after, f.starting_after, f.ending_before].filter((c) => c !== undefined).length <= 1, {
    path: ['ending_before'],
    message: 'give at most one of after, starting_after, ending_before',
  })
  .meta({
    allOf: [
      { not: { required: ['session_id', 'subscription_id'] } },
      { not: { required: ['after', 'starting_after'] } },
      { not: { required: ['after', 'ending_before'] } },
      { not: { required: ['starting_after', 'ending_before'] } },
    ],
  });
export type ListEventsInput = z.input<typeof listEventsInput>;

export const redeliverInput = z.object({
  /** Only to this endpoint; omitted: to every endpoint the event was for. */
  endpointId: endpointId.optional(),
});
export type RedeliverInput = z.input<typeof redeliverInput>;
