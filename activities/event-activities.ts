/**
 * Activities of the outbound events (DESIGN decision 13):
 *
 *   publishEvent   the entry point session and subscription workflows call: a quick signal-with-start
 *                  of the subject's outbox (`events-<subject>`), nothing else, so a slow or dead
 *                  endpoint can never delay a payment;
 *   eventPolicy, eventTargets, priorOutbox   the outbox's bookkeeping (this worker's delivery policy,
 *                  which endpoints want which types, the records of a closed predecessor);
 *   deliverEvent   one signed POST to one endpoint, reading its url and secrets at sending time (the
 *                  registry's query, or this worker's PAYSAGA_EVENT_ENDPOINTS), never failing for an
 *                  HTTP reason: the outcome is an attempt record the outbox keeps and acts on.
 */
import { getClient } from '@temporalio/activity';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/client';
import { request } from 'undici';
import { EVENT_ID_HEADER, EVENT_SIGNATURE_HEADER, type EventType, type PaysagaEvent } from '../common/events';
import {
  ENDPOINT_LIST_MAX_AGE_MS,
  endpointWants,
  eventEndpointsWorkflowId,
  eventOutboxWorkflowId,
  type DeliveryOutcome,
  type DeliveryTarget,
  type EventDeliveryPolicy,
  type EventEndpoint,
} from '../common/event-delivery';
import { eventSignatureHeader } from '../common/event-signature';
import { InvalidEventError, publishPaysagaEvent } from '../common/event-publishing';
import {
  deliveryTargetQuery,
  eventEndpointsQuery,
  type ConfiguredEndpointArgs,
} from '../common/event-messages';
import type { OutboxState } from '../common/event-outbox-types';

/** What session and subscription workflows call (proxyActivities<EventPublishingActivities>). */
export interface EventPublishingActivities {
  /**
   * Hands `event` to its subject's outbox (signal-with-start of `events-<subject>`) and returns: it
   * never waits for a delivery. Safe to retry (the outbox deduplicates by id). An event that breaks
   * the contract (id not `evt_<subject>_<sequence>`, unknown type, no subject) fails without retry.
   */
  publishEvent(event: PaysagaEvent): Promise<void>;
}

export interface EventOutboxActivities {
  eventPolicy(): Promise<EventDeliveryPolicy>;
  /** For each type, the ids of the endpoints that want it (absent: none). */
  eventTargets(types: EventType[]): Promise<Partial<Record<EventType, string[]>>>;
  /** What the subject's last closed outbox run returned, or null when there is none. */
  priorOutbox(subject: string): Promise<OutboxState | null>;
}

export interface EventDeliveryActivities {
  deliverEvent(input: {
    endpointId: string;
    event: PaysagaEvent;
    redelivery: boolean;
  }): Promise<DeliveryOutcome>;
}

/** An endpoint of PAYSAGA_EVENT_ENDPOINTS, with the secrets that sign for it (the first is current). */
export interface ConfiguredEndpoint extends ConfiguredEndpointArgs {
  secrets: string[];
}

export interface EventActivityOptions {
  /** The task queue of the registry and the outboxes (the worker's main queue). */
  taskQueue: string;
  policy: EventDeliveryPolicy;
  /** This worker's PAYSAGA_EVENT_ENDPOINTS (their secrets sign deliveries to them). */
  configured?: ConfiguredEndpoint[];
}

const USER_AGENT = 'paysaga-events/1';

export function createEventActivities(
  o: EventActivityOptions,
): EventPublishingActivities & EventOutboxActivities & EventDeliveryActivities {
  const registry = () => getClient().workflow.getHandle(eventEndpointsWorkflowId(o.taskQueue));
  // The endpoint list, read at most every ENDPOINT_LIST_MAX_AGE_MS (a registration waits that out).
  let list: { readAt: number; endpoints: Promise<EventEndpoint[]> } | undefined;
  const currentEndpoints = (): Promise<EventEndpoint[]> => {
    const now = Date.now();
    if (list && now - list.readAt < ENDPOINT_LIST_MAX_AGE_MS) return list.endpoints;
    const endpoints = registry()
      .query(eventEndpointsQuery)
      .catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return []; // no endpoint was ever registered
        throw err;
      });
    list = { readAt: now, endpoints };
    // A failed read is not kept: the next lookup reads again.
    endpoints.catch(() => {
      if (list?.endpoints === endpoints) list = undefined;
    });
    return endpoints;
  };
  return {
    async publishEvent(event) {
      try {
        await publishPaysagaEvent(getClient(), o.taskQueue, event, o.policy);
      } catch (err) {
        if (err instanceof InvalidEventError) throw ApplicationFailure.nonRetryable(err.message, err.name);
        throw err;
      }
    },

    async eventPolicy() {
      return o.policy;
    },

    async eventTargets(types) {
      const endpoints = await currentEndpoints();
      const out: Partial<Record<EventType, string[]>> = {};
      for (const type of types) {
        const ids = endpoints.filter((e) => endpointWants(e, type)).map((e) => e.id);
        if (ids.length) out[type] = ids;
      }
      return out;
    },

    async priorOutbox(subject) {
      const workflowId = eventOutboxWorkflowId(subject);
      let latest: { runId: string; closed: number } | undefined;
      const query = `WorkflowId = '${workflowId}' AND ExecutionStatus = 'Completed'`;
      for await (const wf of getClient().workflow.list({ query })) {
        const closed = wf.closeTime?.getTime() ?? 0;
        if (!latest || closed > latest.closed) latest = { runId: wf.runId, closed };
      }
      if (!latest) return null;
      return (await getClient().workflow.getHandle(workflowId, latest.runId).result()) as OutboxState;
    },

    ...createEventDeliveryActivities(o),
  };
}

/** The delivery activity alone (the delivery worker of `<task queue>-events` runs only this). */
export function createEventDeliveryActivities(o: EventActivityOptions): EventDeliveryActivities {
  const configuredSecrets = new Map((o.configured ?? []).map((c) => [c.id, c.secrets]));
  return {
    async deliverEvent({ endpointId, event, redelivery }) {
      const at = new Date();
      const base = { at: at.toISOString(), ...(redelivery ? { redelivery: true } : {}) };
      let target: DeliveryTarget | null;
      try {
        target = await getClient()
          .workflow.getHandle(eventEndpointsWorkflowId(o.taskQueue))
          .query(deliveryTargetQuery, endpointId);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) target = null;
        else
          return { ...base, latencyMs: 0, error: `the endpoint registry could not be read: ${message(err)}` };
      }
      if (!target) return { ...base, latencyMs: 0, error: 'the endpoint was deleted', gone: true };
      const secrets =
        target.source === 'config'
          ? (configuredSecrets.get(endpointId) ?? [])
          : target.secrets
              .filter((s) => !s.expiresAt || Date.parse(s.expiresAt) > at.getTime())
              .map((s) => s.secret);
      if (secrets.length === 0)
        return {
          ...base,
          latencyMs: 0,
          error:
            'no secret for this endpoint on this worker (PAYSAGA_EVENT_ENDPOINTS differs between workers?)',
        };

      const body = JSON.stringify(event);
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const signal = AbortSignal.timeout(o.policy.timeoutMs);
      try {
        const res = await request(target.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': USER_AGENT,
            [EVENT_ID_HEADER.toLowerCase()]: event.id,
            [EVENT_SIGNATURE_HEADER.toLowerCase()]: eventSignatureHeader(body, secrets),
          },
          body,
          signal,
          // One connection per delivery: endpoints are many and far between, nothing lingers.
          reset: true,
        });
        const latencyMs = elapsed();
        await res.body.dump().catch(() => undefined);
        return { ...base, latencyMs, status: res.statusCode };
      } catch (err) {
        const error = signal.aborted ? `no answer within ${o.policy.timeoutMs} ms` : message(err);
        return { ...base, latencyMs: elapsed(), error };
      }
    },
  };
}

/** A network failure as a short line: the code (ECONNREFUSED, ...) and message, never a body. */
function message(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code =
    typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  const text = typeof e?.message === 'string' ? e.message : String(err);
  return code && !text.includes(code) ? `${code}: ${text}` : text;
}
