/**
 * EventsClient: event endpoints and events, read from and written to the store
 * (docs/decisions/013-the-backend-is-told.md), for the API and for backends that embed paysaga.
 *
 * Listing: every event has a global position (store/events.ts); a list is oldest first by it, the
 * whole feed or one subject's (`session_id`, `subscription_id`), filtered by `type`, paged with
 * Stripe's `starting_after` / `ending_before` (event ids) or `after` (an event id, or an ISO time:
 * events created after it). `next` is the last id listed: `starting_after` of the next page.
 */
import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import {
  DEFAULT_EVENT_DELIVERY,
  DEFAULT_SECRET_GRACE_MS,
  endpointWants,
  type EventEndpoint,
} from '../common/event-delivery';
import { deriveEndpointSecret, type SigningKeys } from '../platform/event-secrets';
import { parseEventId, type PaysagaEvent } from '../common/events';
import { OutboundGuard, OutboundRefusedError, type OutboundPolicy } from '../platform/outbound-guard';
import type {
  EndpointDeliveryView,
  EventDeliveries,
  EventEndpointWithSecret,
  EventList,
  RedeliveryAccepted,
} from '../common/event-views';
import type { Store } from '../store/database';
import { deliveriesOf, queueRedelivery } from '../store/deliveries';
import {
  countEndpoints,
  createEndpoint,
  deleteEndpoint,
  endpointView,
  getEndpoint,
  listEndpoints,
  rotateEndpointSecret,
  syncConfiguredEndpoints,
} from '../store/endpoints';
import { getEvent, listEvents, seqOfEvent, type StoredEvent } from '../store/events';
import { InputValidationError } from './errors';
import { checkParameters } from './search';
import { EventEndpointNotFoundError, EventNotFoundError, EventStateError } from './event-errors';
import {
  endpointId as endpointIdSchema,
  eventEndpointInput,
  eventIdInput,
  listEventsInput,
  redeliverInput,
  rotateSecretInput,
} from './event-inputs';

export type {
  EndpointDeliveryView,
  EventDeliveries,
  EventEndpointWithSecret,
  EventList,
  RedeliveryAccepted,
} from '../common/event-views';

/** Endpoints a deployment may register through the API (PAYSAGA_EVENT_MAX_ENDPOINTS). */
export const DEFAULT_MAX_ENDPOINTS = 20;

export interface EventsClientOptions {
  store: Store;
  /** Derive endpoint secrets (PAYSAGA_EVENT_SIGNING_KEY, else from PAYSAGA_CODEC_KEYS). */
  signingKeys?: SigningKeys;
  /** How long a redelivery is tried (the workers' PAYSAGA_EVENT_RETRY_FOR_MS). */
  retryForMs?: number;
  maxEndpoints?: number;
  /** Which endpoint URLs may be registered (default: https to public addresses only). */
  outbound?: OutboundPolicy;
}

function parse<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw InputValidationError.fromZod(r.error, prefix);
  return r.data;
}

const withoutSeq = ({ seq: _seq, ...event }: StoredEvent): PaysagaEvent => event;

export class EventsClient {
  private guard: OutboundGuard | undefined;
  constructor(private readonly o: EventsClientOptions) {}

  // ---- endpoints ----

  async createEndpoint(input: unknown): Promise<EventEndpointWithSecret> {
    const i = parse(eventEndpointInput, input);
    await this.checkDestination(i.url);
    const keys = this.signingKeys();
    const max = this.o.maxEndpoints ?? DEFAULT_MAX_ENDPOINTS;
    if ((await countEndpoints(this.o.store)) >= max)
      throw new EventStateError(
        `at most ${max} event endpoints (PAYSAGA_EVENT_MAX_ENDPOINTS): delete one first`,
      );
    const record = await createEndpoint(this.o.store, {
      id: `we_${randomBytes(12).toString('hex')}`,
      url: i.url,
      events: i.events ?? null,
      ...(i.description !== undefined ? { description: i.description } : {}),
      keyId: keys.current,
    });
    return {
      ...endpointView(record),
      secret: deriveEndpointSecret(keys, keys.current, record.id, record.secretVersion),
    };
  }

  /** The outbound edge (platform/outbound-guard.ts): a URL inside the deployment is a 400 naming `url`. */
  private async checkDestination(url: string): Promise<void> {
    this.guard ??= new OutboundGuard(this.o.outbound ?? { allowHttp: false, allow: [] });
    try {
      await this.guard.check(url);
    } catch (err) {
      if (err instanceof OutboundRefusedError)
        throw new InputValidationError([{ field: 'url', rule: err.rule }]);
      throw err;
    }
  }

  async listEndpoints(): Promise<EventEndpoint[]> {
    return (await listEndpoints(this.o.store)).map(endpointView);
  }

  async getEndpoint(id: string): Promise<EventEndpoint> {
    const checked = parse(endpointIdSchema, id, 'id');
    const found = await getEndpoint(this.o.store, checked);
    if (!found) throw new EventEndpointNotFoundError(checked);
    return endpointView(found);
  }

  async deleteEndpoint(id: string): Promise<EventEndpoint> {
    const checked = parse(endpointIdSchema, id, 'id');
    const found = await getEndpoint(this.o.store, checked);
    if (!found) throw new EventEndpointNotFoundError(checked);
    if (found.source === 'config')
      throw new EventStateError(
        `${checked} is configured (PAYSAGA_EVENT_ENDPOINTS): change the workers' configuration`,
      );
    const deleted = await deleteEndpoint(this.o.store, checked);
    if (!deleted) throw new EventEndpointNotFoundError(checked);
    return endpointView(deleted);
  }

  /** A new secret (shown once); the replaced one still signs for `graceMs` (default 24 h). */
  async rotateSecret(id: string, input: unknown = {}): Promise<EventEndpointWithSecret> {
    const checked = parse(endpointIdSchema, id, 'id');
    const { graceMs } = parse(rotateSecretInput, input);
    const found = await getEndpoint(this.o.store, checked);
    if (!found) throw new EventEndpointNotFoundError(checked);
    if (found.source === 'config')
      throw new EventStateError(
        `${checked} is configured (PAYSAGA_EVENT_ENDPOINTS): its secret is in the workers' configuration`,
      );
    const keys = this.signingKeys();
    const record = await rotateEndpointSecret(this.o.store, checked, {
      keyId: keys.current,
      graceMs: graceMs ?? DEFAULT_SECRET_GRACE_MS,
    });
    if (!record) throw new EventEndpointNotFoundError(checked);
    return {
      ...endpointView(record),
      secret: deriveEndpointSecret(keys, keys.current, record.id, record.secretVersion),
    };
  }

  /** Replaces the configured endpoints (PAYSAGA_EVENT_ENDPOINTS of a worker) with these. */
  async syncConfiguredEndpoints(
    configured: { id: string; url: string; events: string[] | null; description?: string }[],
  ): Promise<EventEndpoint[]> {
    await syncConfiguredEndpoints(this.o.store, configured);
    return (await this.listEndpoints()).filter((e) => e.source === 'config');
  }

  // ---- events ----

  async listEvents(input: unknown = {}): Promise<EventList> {
    if (input && typeof input === 'object' && !Array.isArray(input))
      checkParameters(
        Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)),
        listEventsInput,
      );
    const f = parse(listEventsInput, input);
    const subject = f.session_id ?? f.subscription_id;
    // A cursor names an event of the list: one this API does not know, or of another subject than the
    // filter's, is a 404, as reading it would be.
    const position = async (id: string) => {
      const seq =
        subject === undefined || parseEventId(id)?.subject === subject
          ? await seqOfEvent(this.o.store, id)
          : undefined;
      if (seq === undefined) throw new EventNotFoundError(id);
      return seq;
    };
    const startAfter = f.starting_after ?? (f.after && parseEventId(f.after) ? f.after : undefined);
    const createdAfter = f.after && !parseEventId(f.after) ? new Date(f.after) : undefined;
    const base = {
      ...(subject !== undefined ? { subject } : {}),
      ...(f.type ? { types: [f.type] } : {}),
      ...(createdAfter ? { createdFrom: new Date(createdAfter.getTime() + 1) } : {}),
    };
    let rows: StoredEvent[];
    if (f.ending_before !== undefined) {
      const before = await position(f.ending_before);
      rows = (
        await listEvents(this.o.store.db, { ...base, before, order: 'desc', limit: f.limit + 1 })
      ).reverse();
      const hasMore = rows.length > f.limit;
      if (hasMore) rows = rows.slice(1);
      return page(rows, hasMore);
    }
    const after = startAfter !== undefined ? await position(startAfter) : undefined;
    rows = await listEvents(this.o.store.db, {
      ...base,
      ...(after !== undefined ? { after } : {}),
      limit: f.limit + 1,
    });
    const hasMore = rows.length > f.limit;
    return page(rows.slice(0, f.limit), hasMore);
  }

  async getEvent(id: string): Promise<PaysagaEvent> {
    return withoutSeq(await this.findEvent(id));
  }

  async getDeliveries(id: string): Promise<EventDeliveries> {
    const event = await this.findEvent(id);
    const { deliveries, attempts } = await deliveriesOf(this.o.store, event.id);
    const urls = new Map((await listEndpoints(this.o.store)).map((e) => [e.id, e.url]));
    const byEndpoint = new Map<string, typeof deliveries>();
    for (const d of deliveries) byEndpoint.set(d.endpointId, [...(byEndpoint.get(d.endpointId) ?? []), d]);
    const views: EndpointDeliveryView[] = [...byEndpoint].map(([endpointId, rounds]) => {
      const latest = rounds.at(-1)!;
      return {
        endpointId,
        ...(urls.has(endpointId) ? { url: urls.get(endpointId)! } : {}),
        status: latest.status,
        queuedAt: latest.createdAt.toISOString(),
        attempts: attempts
          .filter((a) => a.endpointId === endpointId)
          .slice(-100)
          .map(({ deliveryId: _d, endpointId: _e, ...a }) => a),
        attemptCount: rounds.reduce((n, r) => n + r.attempts, 0),
        ...(latest.status === 'pending' ? { nextAttemptAt: latest.nextAttemptAt.toISOString() } : {}),
        ...(latest.status === 'delivered' && latest.finishedAt
          ? { deliveredAt: latest.finishedAt.toISOString() }
          : {}),
        ...(latest.status === 'failed' && latest.finishedAt
          ? { failedAt: latest.finishedAt.toISOString() }
          : {}),
        redeliveries: rounds.filter((r) => r.redelivery).length,
      };
    });
    return { eventId: event.id, state: 'released', releasedAt: event.created, deliveries: views };
  }

  /** Sends an event again, to one endpoint or to every endpoint it was for (or that wants it now). */
  async redeliver(id: string, input: unknown = {}): Promise<RedeliveryAccepted> {
    const { endpointId } = parse(redeliverInput, input);
    const event = await this.findEvent(id);
    const endpoints = await listEndpoints(this.o.store);
    let ids: string[];
    if (endpointId !== undefined) {
      if (!endpoints.some((e) => e.id === endpointId)) throw new EventEndpointNotFoundError(endpointId);
      ids = [endpointId];
    } else {
      const live = new Set(endpoints.map((e) => e.id));
      const { deliveries } = await deliveriesOf(this.o.store, event.id, 1);
      ids = [...new Set(deliveries.map((d) => d.endpointId))].filter((e) => live.has(e));
      if (ids.length === 0) ids = endpoints.filter((e) => endpointWants(e, event.type)).map((e) => e.id);
      if (ids.length === 0)
        throw new EventStateError(`no endpoint wants ${event.type} events: register one first`);
    }
    await queueRedelivery(
      this.o.store,
      { seq: event.seq, id: event.id, subject: event.session_id ?? event.subscription_id! },
      ids,
      this.o.retryForMs ?? DEFAULT_EVENT_DELIVERY.retryForMs,
    );
    return { eventId: event.id, endpoints: ids };
  }

  private signingKeys(): SigningKeys {
    if (!this.o.signingKeys)
      throw new EventStateError(
        'no signing key is configured (PAYSAGA_EVENT_SIGNING_KEY or PAYSAGA_CODEC_KEYS): endpoint secrets cannot be made',
      );
    return this.o.signingKeys;
  }

  private async findEvent(id: string): Promise<StoredEvent> {
    const checked = parse(eventIdInput, id, 'id');
    const found = await getEvent(this.o.store, checked);
    if (!found) throw new EventNotFoundError(checked);
    return found;
  }
}

function page(rows: StoredEvent[], hasMore: boolean): EventList {
  return {
    events: rows.map(withoutSeq),
    hasMore,
    ...(rows.length ? { next: rows.at(-1)!.id } : {}),
  };
}
