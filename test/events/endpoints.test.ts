/**
 * Event endpoints over HTTP (api/routes/event-endpoints.ts) on a real API, worker and Temporal dev
 * server: registration answers the secret once, listings never show secrets, bad input is refused
 * naming the field and changes nothing, rotation and deletion, and the registry lives in Temporal
 * (a new API process with a new connection sees the same endpoints).
 */
import { buildApi } from '../../api/app';
import { EVENT_TYPES } from '../../common/events';
import { apiDepsFor, listenLocally, useApiStack } from '../api/api-stack';
import { connectTestClient } from '../helpers/temporal';
import { request } from 'undici';

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are inspected field by field */

describe('event endpoints API', () => {
  const api = useApiStack({ webhooks: false });

  const create = (body: unknown) => api.call('POST', '/v1/event-endpoints', { body });
  const list = async () => (await api.call('GET', '/v1/event-endpoints')).body.endpoints as any[];

  test('POST registers an endpoint for every event type and shows its secret once', async () => {
    const before = Date.now();
    const res = await create({ url: 'https://shop.example/paysaga/events', description: 'orders service' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^we_[0-9a-f]{24}$/),
      url: 'https://shop.example/paysaga/events',
      events: null,
      description: 'orders service',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      createdAt: expect.any(String),
      source: 'api',
    });
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before - 5_000);
    expect(res.headers.location).toBe(`/v1/event-endpoints/${res.body.id}`);

    const listing = await api.call('GET', '/v1/event-endpoints');
    expect(listing.status).toBe(200);
    expect(listing.body.endpoints).toContainEqual({ ...res.body, secret: undefined });
    expect(listing.text).not.toContain(res.body.secret);
    expect(listing.text).not.toContain('whsec_');

    const one = await api.call('GET', `/v1/event-endpoints/${res.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body.id).toBe(res.body.id);
    expect(one.text).not.toContain('whsec_');
  });

  test('events chooses the types; each type once', async () => {
    const res = await create({
      url: 'http://127.0.0.1:9/hook',
      events: ['session.succeeded', 'subscription.charged'],
    });
    expect(res.status).toBe(201);
    expect(res.body.events).toEqual(['session.succeeded', 'subscription.charged']);
    expect(res.body).not.toHaveProperty('description');
  });

  test.each([
    ['no url', {}, 'url'],
    ['a url that is not http(s)', { url: 'ftp://shop.example/x' }, 'url'],
    ['a url that is not a url', { url: 'shop.example' }, 'url'],
    ['an unknown event type', { url: 'https://a.example', events: ['session.done'] }, 'events.0'],
    ['an empty event list', { url: 'https://a.example', events: [] }, 'events'],
    ['a type twice', { url: 'https://a.example', events: ['session.failed', 'session.failed'] }, 'events'],
    ['a description too long', { url: 'https://a.example', description: 'x'.repeat(501) }, 'description'],
  ])('400 naming the field, nothing registered: %s', async (_name, body, field) => {
    const count = (await list()).length;
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.fields.map((f: any) => f.field)).toContain(field);
    expect((await list()).length).toBe(count);
  });

  test('the rule of an unknown type names the valid ones', async () => {
    const res = await create({ url: 'https://a.example', events: ['nope'] });
    const rule = res.body.error.fields[0].rule as string;
    for (const t of EVENT_TYPES) expect(rule).toContain(t);
  });

  test('a body that is not an object is refused', async () => {
    const res = await api.call('POST', '/v1/event-endpoints', { raw: '[1]' });
    expect(res.status).toBe(400);
    expect(res.body.error.fields[0].field).toBe('(body)');
  });

  test('unknown ids are 404, malformed ids 400', async () => {
    const missing = await api.call('GET', '/v1/event-endpoints/we_000000000000000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('endpoint_not_found');
    expect((await api.call('DELETE', '/v1/event-endpoints/we_000000000000000000000000')).status).toBe(404);
    expect(
      (await api.call('POST', '/v1/event-endpoints/we_000000000000000000000000/rotate-secret')).status,
    ).toBe(404);
    const bad = await api.call('GET', '/v1/event-endpoints/not-an-id');
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields[0].field).toBe('id');
  });

  test('DELETE removes an endpoint; a second DELETE is 404', async () => {
    const { body: created } = await create({ url: 'https://gone.example/x' });
    const del = await api.call('DELETE', `/v1/event-endpoints/${created.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ id: created.id, url: 'https://gone.example/x', deleted: true });
    expect(del.text).not.toContain('whsec_');
    expect((await api.call('GET', `/v1/event-endpoints/${created.id}`)).status).toBe(404);
    expect((await list()).map((e) => e.id)).not.toContain(created.id);
    expect((await api.call('DELETE', `/v1/event-endpoints/${created.id}`)).status).toBe(404);
  });

  test('rotate-secret shows a new secret once; the old one keeps signing for the grace period', async () => {
    const { body: created } = await create({ url: 'https://rotate.example/x' });
    const before = Date.now();
    const rotated = await api.call('POST', `/v1/event-endpoints/${created.id}/rotate-secret`, {
      body: { graceMs: 3_600_000 },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt)).toBeGreaterThanOrEqual(
      before + 3_600_000 - 5_000,
    );
    expect(rotated.body.secretRotatedAt).toEqual(expect.any(String));

    // The default grace period: 24 h.
    const again = await api.call('POST', `/v1/event-endpoints/${created.id}/rotate-secret`);
    expect(again.status).toBe(200);
    const shown = await api.call('GET', `/v1/event-endpoints/${created.id}`);
    expect(shown.text).not.toContain('whsec_');
    // The second secret signs for the default 24 h from now on.
    expect(Date.parse(shown.body.previousSecretExpiresAt)).toBeGreaterThanOrEqual(
      before + 24 * 3_600_000 - 5_000,
    );

    for (const graceMs of [-1, 1.5, 'soon', 31 * 24 * 3_600_000]) {
      const res = await api.call('POST', `/v1/event-endpoints/${created.id}/rotate-secret`, {
        body: { graceMs },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.fields[0].field).toBe('graceMs');
    }
  });

  test('every event route needs the bearer token', async () => {
    for (const [method, path] of [
      ['GET', '/v1/event-endpoints'],
      ['POST', '/v1/event-endpoints'],
      ['GET', '/v1/event-endpoints/we_000000000000000000000000'],
      ['DELETE', '/v1/event-endpoints/we_000000000000000000000000'],
      ['POST', '/v1/event-endpoints/we_000000000000000000000000/rotate-secret'],
      ['GET', '/v1/events'],
      ['GET', '/v1/events/evt_ps_x_1'],
      ['GET', '/v1/events/evt_ps_x_1/deliveries'],
      ['POST', '/v1/events/evt_ps_x_1/redeliver'],
    ] as const) {
      const res = await api.call(method, path, { token: null });
      expect([method, path, res.status]).toEqual([method, path, 401]);
    }
  });

  test('the registry is durable in Temporal: a new API with its own connection lists the same endpoints', async () => {
    const { body: created } = await create({ url: 'https://durable.example/x', events: ['session.failed'] });
    const expected = await list();
    const fresh = await connectTestClient();
    const second = buildApi({ ...apiDepsFor(api.stack), temporal: fresh.client, apiTokens: ['second-api'] });
    try {
      const { v1Url: url } = await listenLocally(second);
      const res = await request(`${url}/v1/event-endpoints`, {
        headers: { authorization: 'Bearer second-api' },
      });
      const body = (await res.body.json()) as { endpoints: unknown[] };
      expect(res.statusCode).toBe(200);
      expect(body.endpoints).toEqual(expected);
      expect(body.endpoints).toContainEqual(
        expect.objectContaining({ id: created.id, events: ['session.failed'] }),
      );
    } finally {
      await second.close();
      await fresh.close();
    }
  });

  test('the OpenAPI document describes the event routes', async () => {
    const doc = (await api.call('GET', '/openapi.json')).body;
    for (const p of [
      '/v1/event-endpoints',
      '/v1/event-endpoints/{id}',
      '/v1/event-endpoints/{id}/rotate-secret',
      '/v1/events',
      '/v1/events/{id}',
      '/v1/events/{id}/deliveries',
      '/v1/events/{id}/redeliver',
    ])
      expect(Object.keys(doc.paths)).toContain(p);
    expect(doc.paths['/v1/event-endpoints'].post.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/EventEndpointRequest',
    );
    expect(doc.components.schemas.EventEndpointRequest.properties.url).toBeDefined();
    // The query's parameters are one object (its rules relate them), exploded into the query string.
    const query = doc.paths['/v1/events'].get.parameters.find((p: any) => p.in === 'query');
    expect(Object.keys(query.schema.properties)).toEqual(
      expect.arrayContaining(['session_id', 'subscription_id', 'type', 'after', 'limit']),
    );
  });
});
