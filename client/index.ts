export * from './errors';
export * from './identity-check';
export * from './inputs';
export * from './payments-client';
export * from './reconciler';
export * from './return-url';
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
