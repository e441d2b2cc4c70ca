/** Typed errors of the event routes (the API answers them 404 / 409, api/errors.ts). */

/** No event with this id is known (never published, or no longer kept). */
export class EventNotFoundError extends Error {
  constructor(readonly eventId: string) {
    super(`event ${eventId} not found`);
    this.name = 'EventNotFoundError';
  }
}

export class EventEndpointNotFoundError extends Error {
  constructor(readonly endpointId: string) {
    super(`event endpoint ${endpointId} not found`);
    this.name = 'EventEndpointNotFoundError';
  }
}

/** The request is valid but cannot be carried out now (a configured endpoint, an event not yet released). */
export class EventStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventStateError';
  }
}
