/**
 * The registry of event endpoints of one task queue, workflow id `event-endpoints-<task queue>`:
 * durable in Temporal, not in any process. The API changes it through validated Updates (create,
 * delete, rotate a secret); workers replace the configured endpoints (PAYSAGA_EVENT_ENDPOINTS) with
 * theirs at start. Queries list the endpoints (no secrets) and give one endpoint's url and secrets
 * to a delivery about to be sent (a query is not recorded in history).
 *
 * Secrets of the API's endpoints come in Update arguments (made by the API, crypto random): they are
 * in this workflow's history, encrypted like every payload when the codec is configured. Configured
 * endpoints' secrets never enter Temporal. Continue-as-new every UPDATES_PER_RUN changes.
 */
import * as wf from '@temporalio/workflow';
import type { EndpointRecord, EventEndpoint } from '../common/event-delivery';
import {
  createEventEndpointUpdate,
  deleteEventEndpointUpdate,
  deliveryTargetQuery,
  ENDPOINT_CONFLICT,
  ENDPOINT_NOT_FOUND,
  eventEndpointsQuery,
  rotateEventEndpointSecretUpdate,
  syncConfiguredEndpointsUpdate,
} from '../common/event-messages';

export const UPDATES_PER_RUN = 500;

export interface EndpointRegistryState {
  endpoints: EndpointRecord[];
}

const iso = (ms: number) => new Date(ms).toISOString();

export async function eventEndpointsWorkflow(carried?: EndpointRegistryState): Promise<void> {
  const state: EndpointRegistryState = carried ?? { endpoints: [] };
  let updates = 0;

  const find = (id: string) => state.endpoints.find((e) => e.id === id);
  const existing = (id: string, change: string) => {
    const e = find(id);
    if (!e) throw wf.ApplicationFailure.nonRetryable(`event endpoint ${id} not found`, ENDPOINT_NOT_FOUND);
    if (e.source === 'config')
      throw wf.ApplicationFailure.nonRetryable(
        `event endpoint ${id} comes from PAYSAGA_EVENT_ENDPOINTS: ${change} it there`,
        ENDPOINT_CONFLICT,
      );
    return e;
  };
  /** Secrets whose grace period ended are forgotten at the next change. */
  const prune = () => {
    const now = Date.now();
    for (const e of state.endpoints) {
      e.secrets = e.secrets.filter((s) => !s.expiresAt || Date.parse(s.expiresAt) > now);
      const ends = e.secrets.flatMap((s) => (s.expiresAt ? [s.expiresAt] : [])).sort();
      if (ends.length) e.previousSecretExpiresAt = ends[ends.length - 1]!;
      else delete e.previousSecretExpiresAt;
    }
  };

  wf.setHandler(eventEndpointsQuery, () => state.endpoints.map(publicView));
  wf.setHandler(deliveryTargetQuery, (id) => {
    const e = find(id);
    return e ? { id: e.id, url: e.url, source: e.source, secrets: e.secrets } : null;
  });

  wf.setHandler(
    createEventEndpointUpdate,
    (args) => {
      prune();
      const record: EndpointRecord = {
        id: args.id,
        url: args.url,
        events: args.events,
        ...(args.description !== undefined ? { description: args.description } : {}),
        createdAt: iso(Date.now()),
        source: 'api',
        secrets: [{ secret: args.secret }],
      };
      state.endpoints.push(record);
      updates++;
      return publicView(record);
    },
    {
      validator: (args) => {
        if (find(args.id))
          throw wf.ApplicationFailure.nonRetryable(`event endpoint ${args.id} exists`, ENDPOINT_CONFLICT);
      },
    },
  );

  wf.setHandler(
    deleteEventEndpointUpdate,
    ({ id }) => {
      const e = existing(id, 'remove');
      state.endpoints.splice(state.endpoints.indexOf(e), 1);
      prune();
      updates++;
      return publicView(e);
    },
    { validator: ({ id }) => void existing(id, 'remove') },
  );

  wf.setHandler(
    rotateEventEndpointSecretUpdate,
    ({ id, secret, graceMs }) => {
      const e = existing(id, 'rotate');
      const now = Date.now();
      // The current secret signs until the grace period ends; older ones keep their own end (or
      // end now, if that is sooner), so a rotation never extends a secret's life.
      const until = now + graceMs;
      e.secrets = [
        { secret },
        ...e.secrets.map((s) => ({
          secret: s.secret,
          expiresAt: iso(Math.min(s.expiresAt ? Date.parse(s.expiresAt) : until, until)),
        })),
      ];
      e.secretRotatedAt = iso(now);
      prune();
      updates++;
      return publicView(e);
    },
    { validator: ({ id }) => void existing(id, 'rotate') },
  );

  wf.setHandler(syncConfiguredEndpointsUpdate, (configured) => {
    const now = iso(Date.now());
    const kept = state.endpoints.filter(
      (e) => e.source !== 'config' && !configured.some((c) => c.id === e.id),
    );
    const before = new Map(state.endpoints.map((e) => [e.id, e]));
    const fromConfig: EndpointRecord[] = configured.map((c) => ({
      id: c.id,
      url: c.url,
      events: c.events,
      ...(c.description !== undefined ? { description: c.description } : {}),
      createdAt: before.get(c.id)?.createdAt ?? now,
      source: 'config',
      secrets: [],
    }));
    state.endpoints = [...kept, ...fromConfig];
    prune();
    updates++;
    return state.endpoints.map(publicView);
  });

  await wf.condition(() => updates >= UPDATES_PER_RUN || wf.workflowInfo().continueAsNewSuggested);
  await wf.condition(wf.allHandlersFinished);
  await wf.continueAsNew<typeof eventEndpointsWorkflow>(state);
}

function publicView(e: EndpointRecord): EventEndpoint {
  const { secrets: _secrets, ...view } = e;
  return view;
}
