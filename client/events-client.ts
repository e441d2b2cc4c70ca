/**
 * EventsClient: event endpoints (the registry workflow `event-endpoints-<task queue>`) and events
 * (the outboxes `events-<subject>`), for the API and for backends that embed paysaga.
 *
 * Listing: one subject's events come from its outbox, oldest first (by sequence). Across subjects,
 * Temporal visibility finds the outboxes (`LastEventAt`, `EventTypes`), at most
 * MAX_OUTBOXES_SCANNED of them per call, and their events are merged oldest first by
 * (created, subject, sequence). `after` is an event id (what follows it in that order) or an ISO
 * time (events created after it): a cursor, so a follower (`paysaga events tail`) pages forward.
 */
import { randomBytes } from 'node:crypto';
import { WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, WorkflowIdConflictPolicy, type UpdateDefinition } from '@temporalio/common';
import type { z } from 'zod';
import { parseEventId, type PaysagaEvent } from '../common/events';
import {
  DEFAULT_SECRET_GRACE_MS,
  ENDPOINT_LIST_MAX_AGE_MS,
  endpointWants,
  eventEndpointsWorkflowId,
  eventOutboxWorkflowId,
  type EventEndpoint,
  type EventRecord,
} from '../common/event-delivery';
import { generateEventSecret } from '../common/event-signature';
import type {
  EventDeliveries,
  EventEndpointWithSecret,
  EventList,
  RedeliveryAccepted,
} from '../common/event-views';
import {
  createEventEndpointUpdate,
  deleteEventEndpointUpdate,
  ENDPOINT_CONFLICT,
  ENDPOINT_NOT_FOUND,
  eventEndpointsQuery,
  outboxQuery,
  redeliverEventSignal,
  rotateEventEndpointSecretUpdate,
  syncConfiguredEndpointsUpdate,
  type ConfiguredEndpointArgs,
} from '../common/event-messages';
import type { eventEndpointsWorkflow } from '../workflows/event-endpoints';
import type { eventOutboxWorkflow } from '../workflows/event-outbox';
import type { OutboxState } from '../common/event-outbox-types';
import { InputValidationError } from './errors';
import { EventEndpointNotFoundError, EventNotFoundError, EventStateError } from './event-errors';
import {
  endpointId as endpointIdSchema,
  eventEndpointInput,
  eventIdInput,
  listEventsInput,
  redeliverInput,
  rotateSecretInput,
} from './event-inputs';
import { queryWithRetry } from './query';

/** Outboxes read per listing across subjects (each is one query). */
export const MAX_OUTBOXES_SCANNED = 200;
const QUERY_CONCURRENCY = 8;

export type {
  EndpointDeliveryView,
  EventDeliveries,
  EventEndpointWithSecret,
  EventList,
  RedeliveryAccepted,
} from '../common/event-views';

function parse<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw InputValidationError.fromZod(r.error, prefix);
  return r.data;
}

/** (created, subject, sequence): the order of a listing across subjects. */
function compareEvents(a: PaysagaEvent, b: PaysagaEvent): number {
  if (a.created !== b.created) return a.created < b.created ? -1 : 1;
  const sa = a.session_id ?? a.subscription_id ?? '';
  const sb = b.session_id ?? b.subscription_id ?? '';
  if (sa !== sb) return sa < sb ? -1 : 1;
  return a.sequence - b.sequence;
}

export class EventsClient {
  constructor(private readonly o: { temporal: Client; taskQueue: string }) {}

  // ---- endpoints ----

  async createEndpoint(input: unknown): Promise<EventEndpointWithSecret> {
    const i = parse(eventEndpointInput, input);
    const secret = generateEventSecret();
    const view = await this.changeRegistry(createEventEndpointUpdate, {
      id: `we_${randomBytes(12).toString('hex')}`,
      url: i.url,
      events: i.events ?? null,
      ...(i.description !== undefined ? { description: i.description } : {}),
      secret,
    });
    // Workers may answer from an endpoint list this old: past it, every event released goes here too.
    await new Promise((resolve) => setTimeout(resolve, ENDPOINT_LIST_MAX_AGE_MS));
    return { ...view, secret };
  }

  async listEndpoints(): Promise<EventEndpoint[]> {
    try {
      return await queryWithRetry(
        this.registry(),
        eventEndpointsQuery,
        () => new EventEndpointNotFoundError(''),
      );
    } catch (err) {
      if (err instanceof EventEndpointNotFoundError) return []; // no registry: nothing was ever registered
      throw err;
    }
  }

  async getEndpoint(id: string): Promise<EventEndpoint> {
    const checked = parse(endpointIdSchema, id, 'id');
    const found = (await this.listEndpoints()).find((e) => e.id === checked);
    if (!found) throw new EventEndpointNotFoundError(checked);
    return found;
  }

  async deleteEndpoint(id: string): Promise<EventEndpoint> {
    return this.changeRegistry(deleteEventEndpointUpdate, { id: parse(endpointIdSchema, id, 'id') });
  }

  /** A new secret (shown once); the replaced one still signs for `graceMs` (default 24 h). */
  async rotateSecret(id: string, input: unknown = {}): Promise<EventEndpointWithSecret> {
    const checked = parse(endpointIdSchema, id, 'id');
    const { graceMs } = parse(rotateSecretInput, input);
    const secret = generateEventSecret();
    const view = await this.changeRegistry(rotateEventEndpointSecretUpdate, {
      id: checked,
      secret,
      graceMs: graceMs ?? DEFAULT_SECRET_GRACE_MS,
    });
    return { ...view, secret };
  }

  /** Replaces the configured endpoints (PAYSAGA_EVENT_ENDPOINTS of a worker) with these. */
  async syncConfiguredEndpoints(configured: ConfiguredEndpointArgs[]): Promise<EventEndpoint[]> {
    return this.changeRegistry(syncConfiguredEndpointsUpdate, configured);
  }

  // ---- events ----

  async listEvents(input: unknown = {}): Promise<EventList> {
    const f = parse(listEventsInput, input);
    const subject = f.session_id ?? f.subscription_id;
    let events: PaysagaEvent[];
    let after: (e: PaysagaEvent) => boolean = () => true;
    if (subject !== undefined) {
      const box = await this.outbox(subject);
      // Held ones too: they exist (and are sent once the earlier ones arrive).
      events = [...(box?.records ?? []).map((r) => r.event), ...(box?.held ?? [])];
      events = events.filter((e) => (f.session_id ? e.session_id : e.subscription_id) === subject);
      events.sort((a, b) => a.sequence - b.sequence);
      if (f.after !== undefined) {
        const cursor = parseEventId(f.after);
        const since = Date.parse(f.after);
        if (cursor && cursor.subject !== subject)
          throw new InputValidationError([
            { field: 'after', rule: `an event id of ${subject}, or an ISO time` },
          ]);
        after = cursor ? (e) => e.sequence > cursor.sequence : (e) => Date.parse(e.created) > since;
      }
    } else {
      const cursor = f.after === undefined ? undefined : await this.cursor(f.after);
      events = (await this.outboxesSince(cursor?.created, f.type)).flatMap((b) => [
        ...b.records.map((r) => r.event),
        ...b.held,
      ]);
      events.sort(compareEvents);
      if (cursor?.event) after = (e) => compareEvents(e, cursor.event!) > 0;
      else if (cursor) after = (e) => Date.parse(e.created) > Date.parse(cursor.created);
    }
    const matching = events.filter((e) => (f.type === undefined || e.type === f.type) && after(e));
    const page = matching.slice(0, f.limit);
    return {
      events: page,
      hasMore: matching.length > page.length,
      ...(page.length ? { next: page[page.length - 1]!.id } : {}),
    };
  }

  async getEvent(id: string): Promise<PaysagaEvent> {
    const found = await this.findEvent(id);
    return found.record?.event ?? found.held!;
  }

  async getDeliveries(id: string): Promise<EventDeliveries> {
    const found = await this.findEvent(id);
    if (!found.record) return { eventId: found.id, state: 'held', deliveries: [] };
    const urls = new Map((await this.listEndpoints()).map((e) => [e.id, e.url]));
    const rec = found.record;
    return {
      eventId: rec.event.id,
      state: 'released',
      releasedAt: rec.releasedAt,
      ...(rec.late ? { late: true } : {}),
      deliveries: rec.deliveries.map(({ nextAttemptAt, roundAttempts: _r, ...d }) => ({
        ...d,
        ...(urls.has(d.endpointId) ? { url: urls.get(d.endpointId)! } : {}),
        ...(nextAttemptAt !== undefined ? { nextAttemptAt: new Date(nextAttemptAt).toISOString() } : {}),
      })),
    };
  }

  /** Sends a released event again, to one endpoint or to every endpoint it was for; also after its outbox closed. */
  async redeliver(id: string, input: unknown = {}): Promise<RedeliveryAccepted> {
    const { endpointId } = parse(redeliverInput, input);
    const found = await this.findEvent(id);
    if (!found.record)
      throw new EventStateError(
        `event ${found.id} waits for an earlier sequence number; it is sent once released`,
      );
    const endpoints = await this.listEndpoints();
    let ids: string[];
    if (endpointId !== undefined) {
      if (!endpoints.some((e) => e.id === endpointId)) throw new EventEndpointNotFoundError(endpointId);
      ids = [endpointId];
    } else {
      ids = found.record.deliveries.map((d) => d.endpointId);
      if (ids.length === 0)
        ids = endpoints.filter((e) => endpointWants(e, found.record!.event.type)).map((e) => e.id);
      if (ids.length === 0)
        throw new EventStateError(`no endpoint wants ${found.record.event.type} events: register one first`);
    }
    const subject = found.subject;
    await this.o.temporal.workflow.signalWithStart<
      typeof eventOutboxWorkflow,
      [{ eventId: string; endpointId?: string }]
    >('eventOutboxWorkflow', {
      workflowId: eventOutboxWorkflowId(subject),
      taskQueue: this.o.taskQueue,
      args: [{ subject }],
      signal: redeliverEventSignal,
      signalArgs: [{ eventId: found.id, ...(endpointId !== undefined ? { endpointId } : {}) }],
    });
    return { eventId: found.id, endpoints: ids };
  }

  // ---- internals ----

  private registry(): WorkflowHandle {
    return this.o.temporal.workflow.getHandle(eventEndpointsWorkflowId(this.o.taskQueue));
  }

  /** Starts the registry when it does not run yet, then sends the Update; refusals become typed errors. */
  private async changeRegistry<Ret, Arg>(update: UpdateDefinition<Ret, [Arg]>, arg: Arg): Promise<Ret> {
    const workflowId = eventEndpointsWorkflowId(this.o.taskQueue);
    await this.o.temporal.workflow.start<typeof eventEndpointsWorkflow>('eventEndpointsWorkflow', {
      workflowId,
      taskQueue: this.o.taskQueue,
      args: [],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    });
    try {
      return await this.registry().executeUpdate(update, { args: [arg] });
    } catch (err) {
      const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
      if (cause instanceof ApplicationFailure) {
        const id = (arg as { id?: string }).id ?? '';
        if (cause.type === ENDPOINT_NOT_FOUND) throw new EventEndpointNotFoundError(id);
        if (cause.type === ENDPOINT_CONFLICT) throw new EventStateError(cause.message);
      }
      throw err;
    }
  }

  /** The subject's outbox state (its latest run, running or closed), or undefined when it has none. */
  private async outbox(subject: string): Promise<OutboxState | undefined> {
    const handle = this.o.temporal.workflow.getHandle(eventOutboxWorkflowId(subject));
    try {
      return await queryWithRetry(handle, outboxQuery, () => new EventNotFoundError(subject));
    } catch (err) {
      if (err instanceof EventNotFoundError) return undefined;
      throw err;
    }
  }

  private async findEvent(id: string): Promise<{
    id: string;
    subject: string;
    record?: EventRecord;
    held?: PaysagaEvent;
  }> {
    const checked = parse(eventIdInput, id, 'id');
    const parsed = parseEventId(checked);
    if (!parsed) throw new EventNotFoundError(checked);
    const box = await this.outbox(parsed.subject);
    const record = box?.records.find((r) => r.event.id === checked);
    const held = box?.held.find((e) => e.id === checked);
    if (!record && !held) throw new EventNotFoundError(checked);
    return { id: checked, subject: parsed.subject, ...(record ? { record } : {}), ...(held ? { held } : {}) };
  }

  /** `after` as a position: an event (its created time and the event) or a time. */
  private async cursor(after: string): Promise<{ created: string; event?: PaysagaEvent }> {
    if (parseEventId(after)) {
      try {
        const event = await this.getEvent(after);
        return { created: event.created, event };
      } catch (err) {
        if (err instanceof EventNotFoundError)
          throw new InputValidationError([
            { field: 'after', rule: 'an event id this API knows, or an ISO time' },
          ]);
        throw err;
      }
    }
    return { created: new Date(after).toISOString() };
  }

  /** Outboxes of this task queue with an event created at or after `since` (and of `type`), read. */
  private async outboxesSince(since: string | undefined, type: string | undefined): Promise<OutboxState[]> {
    const clauses = [`WorkflowType = 'eventOutboxWorkflow'`, `TaskQueue = '${this.o.taskQueue}'`];
    if (since !== undefined) clauses.push(`LastEventAt >= '${since}'`);
    if (type !== undefined) clauses.push(`EventTypes = '${type}'`);
    const ids = new Set<string>();
    for await (const wf of this.o.temporal.workflow.list({ query: clauses.join(' AND ') })) {
      ids.add(wf.workflowId);
      if (ids.size >= MAX_OUTBOXES_SCANNED) break;
    }
    const subjects = [...ids].map((id) => id.slice('events-'.length));
    const out: OutboxState[] = [];
    for (let i = 0; i < subjects.length; i += QUERY_CONCURRENCY) {
      const boxes = await Promise.all(subjects.slice(i, i + QUERY_CONCURRENCY).map((s) => this.outbox(s)));
      for (const b of boxes) if (b) out.push(b);
    }
    return out;
  }
}
