/**
 * Outbound events end to end: a backend registers through the API, events are published through the
 * real `publishEvent` activity (from a tiny workflow, as subscription workflows do) into the store, the
 * worker's dispatcher delivers them from there, and local HTTP receivers get them. Pauses are shortened
 * by the worker's policy.
 */
import { DEFAULT_EVENT_DELIVERY, type EventDeliveryPolicy } from '../../common/event-delivery';
import type { PaysagaEvent } from '../../common/events';
import { WorkflowFailedError } from '@temporalio/client';
import { PaysagaEventVerificationError, verifyPaysagaEvent } from '../../client/http';
import { tailEvents } from '../../cli/commands/events';
import { useApiStack } from '../api/api-stack';
import {
  acceptedBySubject,
  newSubject,
  sessionEvent,
  sessionLife,
  startEventPublisher,
  startEventReceiver,
  subscriptionEvent,
  type EventPublisher,
  type EventReceiver,
} from '../helpers/events';

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are inspected field by field */

const POLICY: EventDeliveryPolicy = {
  ...DEFAULT_EVENT_DELIVERY,
  retryForMs: 15_000,
  initialRetryMs: 200,
  maxRetryMs: 1_000,
  timeoutMs: 2_000,
};

const range = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i);

describe('event delivery', () => {
  const api = useApiStack({ webhooks: false, events: { policy: POLICY } });
  let publisher: EventPublisher;
  const receivers: EventReceiver[] = [];

  beforeAll(async () => {
    publisher = await startEventPublisher();
  });
  afterAll(async () => {
    await publisher?.close();
  });
  afterEach(async () => {
    // Each test registers its own endpoints: none is left to the next one.
    const { body } = await api.call('GET', '/v1/event-endpoints');
    for (const e of body.endpoints)
      if (e.source === 'api') await api.call('DELETE', `/v1/event-endpoints/${e.id}`);
    for (const r of receivers.splice(0)) await r.close();
  });

  const receiver = async (...args: Parameters<typeof startEventReceiver>) => {
    const r = await startEventReceiver(...args);
    receivers.push(r);
    return r;
  };
  const register = async (url: string, events?: string[]) => {
    const res = await api.call('POST', '/v1/event-endpoints', {
      body: { url, ...(events ? { events } : {}) },
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string };
  };
  const publish = (events: PaysagaEvent[], o?: { mode?: 'sequential' | 'concurrent' }) =>
    publisher.publish(api.stack.taskQueue, events, o);
  const deliveries = async (id: string) => {
    const res = await api.call('GET', `/v1/events/${id}/deliveries`);
    expect(res.status).toBe(200);
    return res.body;
  };
  const verifies = (raw: string, header: string, secrets: string[]) => {
    try {
      return verifyPaysagaEvent(raw, header, secrets).id;
    } catch (err) {
      if (err instanceof PaysagaEventVerificationError) return err.reason;
      throw err;
    }
  };

  test('every event once per id, in order per subject, each signed so that it verifies', async () => {
    const r = await receiver();
    const endpoint = await register(r.url);
    const inOrder = sessionLife(newSubject());
    const another = sessionLife(newSubject());
    const sub = `sub-${newSubject('s')}`;
    const subscription = [
      subscriptionEvent(sub, 1, 'subscription.created'),
      subscriptionEvent(sub, 2, 'subscription.charged'),
      subscriptionEvent(sub, 3, 'subscription.charged'),
    ];
    const all = [...inOrder, ...another, ...subscription];

    await Promise.all([
      publish(inOrder),
      publish(another),
      publish(subscription),
      publish(inOrder.slice(0, 3)), // the same events again: deduplicated by id
    ]);
    await r.until((x) => x.accepted().length >= all.length, 'all events delivered');

    const bySubject = acceptedBySubject(r);
    for (const events of [inOrder, another, subscription]) {
      const subject = events[0]!.session_id ?? events[0]!.subscription_id!;
      expect([subject, bySubject.get(subject)]).toEqual([subject, range(events.length)]);
    }
    expect(r.deliveries).toHaveLength(all.length); // nothing twice, nothing else
    for (const d of r.deliveries) {
      expect(d.contentType).toBe('application/json');
      expect(d.eventIdHeader).toBe(d.event.id);
      expect(d.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verifies(d.raw, d.signature, [endpoint.secret])).toBe(d.event.id);
      expect(d.event).toEqual(all.find((e) => e.id === d.event.id));
    }

    const first = await deliveries(inOrder[0]!.id);
    expect(first).toMatchObject({ eventId: inOrder[0]!.id, state: 'released' });
    expect(first.deliveries).toEqual([
      expect.objectContaining({
        endpointId: endpoint.id,
        url: r.url,
        status: 'delivered',
        attemptCount: 1,
        attempts: [{ at: expect.any(String), latencyMs: expect.any(Number), status: 200 }],
        deliveredAt: expect.any(String),
      }),
    ]);
  });

  test('an endpoint answering 500 for a while gets the event later; every attempt is recorded', async () => {
    const r = await receiver((_e, nth) => (nth <= 3 ? 500 : 200));
    const endpoint = await register(r.url);
    const events = sessionLife(newSubject()).slice(0, 3);
    await publish(events);
    await r.until((x) => x.accepted().length >= 3, 'delivered after the 500s');

    expect(r.deliveries.map((d) => [d.event.sequence, d.answered])).toEqual([
      [1, 500],
      [1, 500],
      [1, 500],
      [1, 200],
      [2, 200],
      [3, 200],
    ]);
    const first = (await deliveries(events[0]!.id)).deliveries[0];
    expect(first).toMatchObject({ endpointId: endpoint.id, status: 'delivered', attemptCount: 4 });
    expect(first.attempts.map((a: any) => a.status)).toEqual([500, 500, 500, 200]);
    for (const a of first.attempts) {
      expect(a.latencyMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(a.at)).not.toBeNaN();
    }
    const times = first.attempts.map((a: any) => Date.parse(a.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect((await deliveries(events[1]!.id)).deliveries[0].attempts.map((a: any) => a.status)).toEqual([200]);
  });

  test('a dead endpoint never delays a live one; after the retry window it is marked failed, visibly', async () => {
    const live = await receiver();
    const dead = await receiver(() => 'hang');
    const liveEndpoint = await register(live.url);
    const deadEndpoint = await register(dead.url);
    const events = sessionLife(newSubject()).slice(0, 3);
    await publish(events);

    await live.until((x) => x.accepted().length >= 3, 'the live endpoint got every event');
    expect(acceptedBySubject(live).get(events[0]!.session_id!)).toEqual([1, 2, 3]);
    // The dead endpoint's lane is still busy with its first event: the live one did not wait for it.
    const third = (await deliveries(events[2]!.id)).deliveries;
    expect(third.find((d: any) => d.endpointId === liveEndpoint.id).status).toBe('delivered');
    expect(third.find((d: any) => d.endpointId === deadEndpoint.id)).toMatchObject({ status: 'pending' });

    for (const e of events) {
      let seen: any;
      const deadline = Date.now() + 60_000;
      for (;;) {
        seen = (await deliveries(e.id)).deliveries.find((d: any) => d.endpointId === deadEndpoint.id);
        if (seen.status !== 'pending' || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect([e.id, seen.status]).toEqual([e.id, 'failed']);
      expect(seen.failedAt).toEqual(expect.any(String));
      expect(seen.attempts.length).toBeGreaterThanOrEqual(1);
      expect(seen.attempts.every((a: any) => /no answer within 2000 ms/.test(a.error))).toBe(true);
    }
    // Retried (more than one attempt for the first event), each attempt a real request.
    const firstAttempts = (await deliveries(events[0]!.id)).deliveries.find(
      (d: any) => d.endpointId === deadEndpoint.id,
    ).attemptCount;
    expect(firstAttempts).toBeGreaterThanOrEqual(2);
    expect(dead.deliveries.filter((d) => d.event.id === events[0]!.id)).toHaveLength(firstAttempts);
  });

  test('redeliver: to every endpoint of the event, and to one given', async () => {
    const a = await receiver();
    const b = await receiver();
    const endpointA = await register(a.url);
    const endpointB = await register(b.url);
    const subject = newSubject();
    const events = sessionLife(subject).slice(0, 2);
    await publish(events);
    await a.until((x) => x.accepted().length >= 2, 'a got both');
    await b.until((x) => x.accepted().length >= 2, 'b got both');

    const all = await api.call('POST', `/v1/events/${events[0]!.id}/redeliver`);
    expect(all.status).toBe(202);
    expect(all.body).toEqual({ eventId: events[0]!.id, endpoints: [endpointA.id, endpointB.id] });
    await a.until((x) => x.accepted().length >= 3, 'a got it again');
    await b.until((x) => x.accepted().length >= 3, 'b got it again');
    for (const r of [a, b]) {
      const again = r.accepted()[2]!;
      expect(again.event).toEqual(events[0]);
      expect(verifies(again.raw, again.signature, [r === a ? endpointA.secret : endpointB.secret])).toBe(
        events[0]!.id,
      );
    }

    const one = await api.call('POST', `/v1/events/${events[1]!.id}/redeliver`, {
      body: { endpointId: endpointB.id },
    });
    expect(one.status).toBe(202);
    expect(one.body.endpoints).toEqual([endpointB.id]);
    await b.until((x) => x.accepted().length >= 4, 'b got the second again');
    expect(b.accepted()[3]!.event.id).toBe(events[1]!.id);
    const second = await deliveries(events[1]!.id);
    expect(second.deliveries.find((d: any) => d.endpointId === endpointB.id)).toMatchObject({
      status: 'delivered',
      redeliveries: 1,
      attemptCount: 2,
      attempts: [
        expect.not.objectContaining({ redelivery: true }),
        expect.objectContaining({ redelivery: true }),
      ],
    });
    expect(second.deliveries.find((d: any) => d.endpointId === endpointA.id)).toMatchObject({
      redeliveries: 0,
      attemptCount: 1,
    });

    // The next event of the subject goes out after the redeliveries, in order.
    await publish([sessionEvent(subject, 3, 'session.refunded')]);
    await a.until((x) => x.accepted().length >= 4, 'a got the next event');
    expect(a.accepted()[3]!.event.sequence).toBe(3);
    const listed = await api.call('GET', `/v1/events?session_id=${subject}`);
    expect(listed.body.events.map((e: any) => e.sequence)).toEqual([1, 2, 3]);

    expect((await api.call('POST', `/v1/events/evt_${subject}_99/redeliver`)).status).toBe(404);
    const unknownEndpoint = await api.call('POST', `/v1/events/${events[0]!.id}/redeliver`, {
      body: { endpointId: 'we_000000000000000000000000' },
    });
    expect(unknownEndpoint.status).toBe(404);
    expect(unknownEndpoint.body.error.code).toBe('endpoint_not_found');
    expect((await api.call('POST', '/v1/events/not-an-event/redeliver')).status).toBe(400);
  });

  test('rotation: during the grace period both secrets sign; after it only the new one', async () => {
    const r = await receiver();
    const endpoint = await register(r.url);
    const subject = newSubject();
    await publish([sessionEvent(subject, 1, 'session.created')]);
    await r.until((x) => x.accepted().length >= 1, 'first event');
    expect(r.deliveries[0]!.signature.match(/v1=/g)).toHaveLength(1);

    const rotated = await api.call('POST', `/v1/event-endpoints/${endpoint.id}/rotate-secret`, {
      body: { graceMs: 8_000 }, // room for a loaded machine to deliver the next event within it
    });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    await publish([sessionEvent(subject, 2, 'session.awaiting_payer')]);
    await r.until((x) => x.accepted().length >= 2, 'second event');
    const during = r.deliveries[1]!;
    expect(during.signature.match(/v1=/g)).toHaveLength(2);
    expect(verifies(during.raw, during.signature, [endpoint.secret])).toBe(during.event.id);
    expect(verifies(during.raw, during.signature, [fresh])).toBe(during.event.id);

    const graceEnds = Date.parse(rotated.body.previousSecretExpiresAt);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, graceEnds - Date.now() + 200)));
    await publish([sessionEvent(subject, 3, 'session.succeeded')]);
    await r.until((x) => x.accepted().length >= 3, 'third event');
    const after = r.deliveries[2]!;
    expect(after.signature.match(/v1=/g)).toHaveLength(1);
    expect(verifies(after.raw, after.signature, [fresh])).toBe(after.event.id);
    expect(verifies(after.raw, after.signature, [endpoint.secret])).toBe('no_matching_signature');
  });

  test('an endpoint failing every fifth request gets 30 events of a subject once each, in order', async () => {
    const r = await receiver((_e, nth) => (nth % 5 === 0 ? 500 : 200));
    await register(r.url);
    const subject = newSubject();
    const types = ['session.created', 'session.awaiting_payer', 'session.refunded'] as const;
    const events = range(30).map((n) => sessionEvent(subject, n, types[n % 3]!));
    await publish(events);
    await r.until((x) => x.accepted().length >= 30, 'all 30 delivered');
    expect(acceptedBySubject(r).get(subject)).toEqual(range(30));
    // Each 500 was followed by a retry of the same event before the next one went.
    const sequence = r.deliveries.map((d) => d.event.sequence);
    for (let i = 1; i < sequence.length; i++) expect(sequence[i]! - sequence[i - 1]!).toBeLessThanOrEqual(1);
  });

  test('events no endpoint wants are recorded and listed, and sent nowhere', async () => {
    const r = await receiver();
    await register(r.url, ['subscription.canceled']);
    const subject = newSubject();
    const event = sessionEvent(subject, 1, 'session.created');
    await publish([event]);
    expect((await api.call('GET', `/v1/events/${event.id}`)).body).toEqual(event);
    expect(await deliveries(event.id)).toMatchObject({ state: 'released', deliveries: [] });
    expect(r.deliveries).toHaveLength(0);
  });

  test('an event that breaks the contract is refused without retry, and nothing is recorded', async () => {
    const subject = newSubject();
    const wrongId = { ...sessionEvent(subject, 2, 'session.failed'), id: `evt_${subject}_7` };
    await expect(publish([wrongId])).rejects.toBeInstanceOf(WorkflowFailedError);
    const wrongType = {
      ...sessionEvent(subject, 2, 'session.failed'),
      type: 'subscription.charged' as const,
    };
    await expect(publish([wrongType])).rejects.toBeInstanceOf(WorkflowFailedError);
    const noSubject = { ...sessionEvent(subject, 2, 'session.failed'), session_id: undefined };
    await expect(publish([noSubject])).rejects.toBeInstanceOf(WorkflowFailedError);
    for (const id of [`evt_${subject}_7`, `evt_${subject}_2`])
      expect((await api.call('GET', `/v1/events/${id}`)).status).toBe(404);
  });

  describe('listing', () => {
    const a = newSubject();
    const b = newSubject();
    const sub = `sub-${newSubject('s')}`;
    let since: string;
    let published: PaysagaEvent[];

    beforeAll(async () => {
      since = new Date(Date.now() - 1).toISOString();
      published = [
        ...sessionLife(a).slice(0, 4),
        ...sessionLife(b).slice(0, 2),
        subscriptionEvent(sub, 1, 'subscription.created'),
        subscriptionEvent(sub, 2, 'subscription.charged'),
      ];
      // Stored when the activity returns: listed at once.
      await publish(published);
    });

    const list = async (query: string) => {
      const res = await api.call('GET', `/v1/events?${query}`);
      expect([query, res.status]).toEqual([query, 200]);
      return res.body as { events: PaysagaEvent[]; hasMore: boolean; next?: string };
    };

    test("one subject's events, oldest first, exactly as sent", async () => {
      const page = await list(`session_id=${a}`);
      expect(page.events).toEqual(published.filter((e) => e.session_id === a));
      expect(page.hasMore).toBe(false);
      expect((await list(`subscription_id=${sub}`)).events.map((e) => e.id)).toEqual([
        `evt_${sub}_1`,
        `evt_${sub}_2`,
      ]);
      expect((await list(`session_id=${a}&type=session.succeeded`)).events.map((e) => e.sequence)).toEqual([
        4,
      ]);
      expect((await api.call('GET', `/v1/events/evt_${a}_2`)).body).toEqual(published[1]);
    });

    test("pages with Stripe's starting_after and ending_before, forward and back", async () => {
      const first = await list(`session_id=${a}&limit=2`);
      const second = await list(`session_id=${a}&limit=2&starting_after=${first.next}`);
      expect(second.events.map((e) => e.sequence)).toEqual([3, 4]);
      const back = await list(`session_id=${a}&limit=2&ending_before=${second.events[0]!.id}`);
      expect(back.events.map((e) => e.sequence)).toEqual([1, 2]);
      expect(back.hasMore).toBe(false);
      const oneBack = await list(`session_id=${a}&limit=1&ending_before=evt_${a}_3`);
      expect(oneBack).toMatchObject({ hasMore: true, events: [expect.objectContaining({ sequence: 2 })] });
    });

    test('pages with after and limit', async () => {
      const first = await list(`session_id=${a}&limit=2`);
      expect(first.events.map((e) => e.sequence)).toEqual([1, 2]);
      expect(first).toMatchObject({ hasMore: true, next: `evt_${a}_2` });
      const second = await list(`session_id=${a}&limit=2&after=${first.next}`);
      expect(second.events.map((e) => e.sequence)).toEqual([3, 4]);
      expect(second.hasMore).toBe(false);
    });

    test('across subjects, in the order they were stored, with type and after', async () => {
      const ids = new Set(published.map((e) => e.id));
      const everything = await list(`after=${since}&limit=200`);
      const ours = everything.events.filter((e) => ids.has(e.id));
      // Published one after the other: listed in that order (the order they were stored).
      expect(ours.map((e) => e.id)).toEqual(published.map((e) => e.id));

      const charged = await list(`after=${since}&type=subscription.charged`);
      expect(charged.events.every((e) => e.type === 'subscription.charged')).toBe(true);
      expect(charged.events.map((e) => e.id)).toContain(`evt_${sub}_2`);

      // Paging across subjects by id: every event once.
      const seen: string[] = [];
      let after = since;
      for (let pages = 0; pages < 50; pages++) {
        const page = await list(`after=${after}&limit=3`);
        seen.push(...page.events.map((e) => e.id));
        if (!page.hasMore) break;
        after = page.next!;
      }
      expect(seen.filter((id) => ids.has(id)).sort()).toEqual([...ids].sort());
      expect(new Set(seen).size).toBe(seen.length);
    });

    test('bad filters are 400 naming the field; unknown events 404', async () => {
      for (const [query, field] of [
        ['type=session.done', 'type'],
        ['after=yesterday', 'after'],
        ['limit=0', 'limit'],
        ['limit=201', 'limit'],
        [`session_id=${a}&subscription_id=${sub}`, 'subscription_id'],
        [`starting_after=evt_${a}_1&ending_before=evt_${a}_2`, 'ending_before'],
        // A parameter the feed does not take (a misspelt filter would list everything).
        [`sesion_id=${a}`, 'sesion_id'],
        ['after[at]=2026-01-01', 'after[at]'],
      ]) {
        const res = await api.call('GET', `/v1/events?${query}`);
        expect([query, res.status, res.body.error?.fields?.[0]?.field]).toEqual([query, 400, field]);
      }
      // A cursor that names an event nobody knows, or one of another subject: 404, as reading it would be.
      for (const query of [
        `session_id=${a}&after=evt_${b}_1`,
        `session_id=${a}&starting_after=evt_${b}_1`,
        'after=evt_ps_unknown_1',
        'starting_after=evt_ps_unknown_1',
        'ending_before=evt_ps_unknown_1',
      ]) {
        const res = await api.call('GET', `/v1/events?${query}`);
        expect([query, res.status, res.body.error?.code]).toEqual([query, 404, 'event_not_found']);
      }
      expect((await api.call('GET', `/v1/events/evt_${a}_99`)).status).toBe(404);
      expect((await api.call('GET', `/v1/events/evt_${a}_99/deliveries`)).body.error.code).toBe(
        'event_not_found',
      );
    });
  });

  test('paysaga events tail prints each new event once, filtered, and stops when told', async () => {
    const subject = newSubject();
    const other = newSubject();
    const lines: string[] = [];
    const controller = new AbortController();
    const deps = {
      out: (l: string) => lines.push(l),
      err: () => undefined,
      env: {},
      signal: controller.signal,
    };
    const all = tailEvents({ api: api.url, token: api.token, intervalMs: 200 }, deps);
    const onlyOne: string[] = [];
    const filtered = tailEvents(
      { api: api.url, token: api.token, intervalMs: 200, session: subject, type: 'session.succeeded' },
      { ...deps, out: (l) => onlyOne.push(l) },
    );
    await publish([...sessionLife(subject).slice(0, 4), ...sessionLife(other).slice(0, 1)]);
    const deadline = Date.now() + 30_000;
    while (
      (lines.filter((l) => l.includes(subject) || l.includes(other)).length < 5 || onlyOne.length < 1) &&
      Date.now() < deadline
    )
      await new Promise((resolve) => setTimeout(resolve, 100));
    // A few more polls: nothing is printed twice.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    controller.abort();
    await Promise.all([all, filtered]);

    const ours = lines.filter((l) => l.includes(subject) || l.includes(other));
    expect(ours).toHaveLength(5);
    expect(ours.filter((l) => l.includes(subject)).map((l) => l.split(/\s+/)[1])).toEqual([
      'session.created',
      'session.awaiting_payer',
      'session.awaiting_finalization',
      'session.succeeded',
    ]);
    expect(ours[0]).toMatch(
      new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\s+session\\.created\\s+${subject}\\s+evt_${subject}_1$`),
    );
    expect(onlyOne).toEqual([expect.stringContaining(`evt_${subject}_4`)]);
  });
});
