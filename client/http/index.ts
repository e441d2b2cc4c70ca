/**
 * The typed HTTP client of the paysaga API, for backend services that reach paysaga over HTTP only
 * (api/README.md, "TypeScript client"). Loads neither Temporal nor the provider client.
 */
export * from './api-client';
export * from './endpoints';
export * from './errors';
