/**
 * The typed HTTP client of the paysaga API, for backend services that reach paysaga over HTTP only
 * (api/README.md, "TypeScript client"). Loads neither Temporal nor the provider client.
 */
export * from './api-client';
export * from './endpoints';
export * from './errors';
// Receiving events: the signature check every backend needs (no Temporal, node:crypto only).
export * from '../event-verification';
export type { EventType, PaysagaEvent } from '../../common/events';
export { EVENT_TYPES, EVENT_ID_HEADER, EVENT_SIGNATURE_HEADER } from '../../common/events';
