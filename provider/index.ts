export * from './schemas/card';
export * from './client';
export * from './config';
export * from './schemas/endpoints';
export * from './errors';
export * from './idempotency';
export * from './serialize';
export * from './signing';
export * from './webhook-verifier';
export * from './withdrawn-keys';
export * as schemas from './schemas';
export type {
  SessionInfo,
  Payment,
  Payout,
  Moneyback,
  UserAction,
  WebhookEvent,
  WebhookType,
  RecurringTokenInfo,
  SessionStatus,
  OperationStatus,
} from './schemas';
export * from './from-config';
