export * from './errors';
export * from './fingerprint';
export * from './event-errors';
export * from './event-inputs';
export * from '../common/event-publishing';
export * from './event-verification';
export * from './events-client';
export * from './inputs';
export * from './subscription-inputs';
export * from './payments-client';
export * from './reconciler';
export * from './return-url';
export * from './search';
export * from './webhook-replay';
export * from './webhook-handler';
export * from './webhook-router';
export type { StartOptions } from './starter';
export type { Started } from './reads';
export type { DecisionResult } from './sessions';
export {
  DEFAULT_SETTINGS,
  mergeSettings,
  type SessionSettings,
  type SettingsOverrides,
} from '../common/settings';
export type { SessionKind, SessionPhase } from '../common/kinds';
export type {
  BillingPeriodView,
  OperationView,
  PeriodPage,
  SessionView,
  StoredPeriod,
  SubscriptionView,
} from '../common/views';
