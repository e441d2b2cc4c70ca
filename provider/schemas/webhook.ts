import { z } from 'zod';
import { sessionInfo } from './session';

export const WEBHOOK_TYPES = [
  'approve_pending',
  'finalization_pending',
  'action_pending',
  'checkout_results',
  'checkout_refunded',
] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

/** Unknown event types are kept (the set may grow); the receiver decides what to do with them. */
export const webhookEvent = z.looseObject({ type: z.string().min(1), session_info: sessionInfo });
export type WebhookEvent = z.infer<typeof webhookEvent>;
