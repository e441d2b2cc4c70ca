export * from './errors';
export * from './event-errors';
export * from './event-inputs';
export * from './event-publishing';
export * from './event-verification';
export * from './events-client';
export * from './identity-check';
export * from './inputs';
export * from './payments-client';
export * from './reconciler';
export * from './settings';
export * from './webhook-handler';
export * from './webhook-router';
export type {
  SessionView,
  SessionPhase,
  SessionKind,
  OperationView,
  SessionSettings,
} from '../workflows/types';
