/**
 * Nothing depends on Temporal's retention (docs/decisions/015-paysaga-remembers.md): a session runs to
 * its result, its workflow closes (followMs 0), and then every closed workflow execution of the namespace
 * is deleted, as the namespace's retention does after its days. paysaga still answers the session from
 * its store, finds it by reference, answers the same request with the same session (no new provider
 * session), carries out a refund once, records a chargeback the provider reports months later, and lists
 * the session's events. Runs in a namespace of its own, so no other test's workflows are deleted.
 */
import { randomBytes } from 'node:crypto';
import { Connection, WorkflowNotFoundError } from '@temporalio/client';
import { setupTemporal } from '../../cli/temporal-setup';
import { card, FRICTIONLESS, ref, rub, startApiStack, type ApiStack } from '../api/api-stack';
import { testAddress } from '../helpers/temporal';
import { until } from '../helpers/until';

jest.setTimeout(180_000);

const NAMESPACE = `retention-${randomBytes(4).toString('hex')}`;

let s: ApiStack;
let connection: Connection;

beforeAll(async () => {
  connection = await Connection.connect({ address: testAddress() });
  await setupTemporal(connection, { namespace: NAMESPACE, retentionDays: 1, settleTimeoutMs: 30_000 });
  s = await startApiStack({ namespace: NAMESPACE, settings: { followMs: 0 } });
});
afterAll(async () => {
  await s?.close();
  await connection?.close();
});

/** What the namespace's retention does: every closed execution is deleted, its history with it. */
async function deleteClosedExecutions(): Promise<number> {
  const closed: { workflowId: string; runId: string }[] = [];
  for await (const wf of s.stack.temporal.workflow.list({ query: `ExecutionStatus != 'Running'` }))
    closed.push({ workflowId: wf.workflowId, runId: wf.runId });
  for (const execution of closed)
    await s.stack.temporal.workflowService.deleteWorkflowExecution({
      namespace: NAMESPACE,
      workflowExecution: execution,
    });
  for (const { workflowId, runId } of closed)
    await until(
      `${workflowId} is deleted`,
      async () => {
        try {
          await s.stack.temporal.workflow.getHandle(workflowId, runId).describe();
          return false;
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) return true;
          throw err;
        }
      },
      (gone) => gone,
    );
  return closed.length;
}

async function closedRun(sessionId: string): Promise<void> {
  await until(
    `${sessionId} closes`,
    async () => (await s.stack.temporal.workflow.getHandle(sessionId).describe()).status.name,
    (status) => status !== 'RUNNING',
  );
}

const ledger = async (sessionId: string) =>
  (await s.stack.sandbox.ledger(sessionId)).entries.map((e) => [e.kind, e.amount]);
const providerSessions = async () => (await s.stack.sandbox.stats()).stats.sessions;

/** The same checks for any money-moving session whose workflows are all gone. */
async function afterRetention(o: {
  sessionId: string;
  reference: string;
  create: () => ReturnType<ApiStack['call']>;
  refund?: number;
}): Promise<void> {
  const { sessionId, reference } = o;
  // The session, from the store.
  const read = await s.call('GET', `/v1/sessions/${sessionId}`);
  expect(read.status).toBe(200);
  expect(read.body).toMatchObject({ sessionId, reference, final: true });
  // Search by reference.
  const found = await s.call('GET', `/v1/sessions?reference=${encodeURIComponent(reference)}`);
  expect(found.body.sessions.map((x: { sessionId: string }) => x.sessionId)).toEqual([sessionId]);
  // The same request again: the same session, no new provider session.
  const before = await providerSessions();
  const again = await o.create();
  expect([again.status, again.body.sessionId]).toEqual([200, sessionId]);
  expect(await providerSessions()).toBe(before);
  // Its events are listed.
  const events = await s.call('GET', `/v1/events?session_id=${sessionId}`);
  expect(events.body.events.map((e: { type: string }) => e.type)).toContain('session.created');
}

test('a card checkout after retention: read, found, repeated, refunded once, charged back, its events listed', async () => {
  const reference = ref('ret-card');
  const body = {
    method: 'card',
    reference,
    amount: rub(10_000),
    card: card(FRICTIONLESS),
    customer: { user_id: 'u1' },
  };
  const created = await s.call('POST', '/v1/checkouts?wait=15000', { body });
  expect(created.status).toBe(201);
  const sessionId = created.body.sessionId as string;
  await until(
    'the checkout succeeds',
    async () => (await s.call('GET', `/v1/sessions/${sessionId}`)).body,
    (v) => v.phase === 'succeeded',
  );
  await closedRun(sessionId);
  expect(await deleteClosedExecutions()).toBeGreaterThanOrEqual(1);
  await expect(s.stack.temporal.workflow.getHandle(sessionId).describe()).rejects.toBeInstanceOf(
    WorkflowNotFoundError,
  );

  await afterRetention({
    sessionId,
    reference,
    create: () => s.call('POST', '/v1/checkouts', { body }),
  });
  expect(
    (await s.call('GET', `/v1/events?session_id=${sessionId}`)).body.events.map(
      (e: { type: string }) => e.type,
    ),
  ).toContain('session.succeeded');

  // A partial refund: a new run carries the session on from the store, and refunds once.
  const refund = await s.call('POST', `/v1/sessions/${sessionId}/refunds?wait=15000`, {
    body: { reference: `${reference}-r1`, amount: 3_000 },
  });
  expect(refund.status).toBe(201);
  const refunded = await until(
    'the refund succeeds',
    async () => (await s.call('GET', `/v1/sessions/${sessionId}`)).body,
    (v) => v.refunds?.[0]?.status === 'succeeded' && v.totals.refunded === 3_000,
  );
  expect(refunded.phase).toBe('succeeded');
  const again = await s.call('POST', `/v1/sessions/${sessionId}/refunds`, {
    body: { reference: `${reference}-r1`, amount: 3_000 },
  });
  expect(again.status).toBe(200);

  // Months later the card network charges back: the provider's webhook reaches the store's session.
  await closedRun(sessionId);
  await deleteClosedExecutions();
  const chargebackAt = Date.now();
  await s.stack.sandbox.plain('POST', '/sandbox/chargebacks', {
    session_id: sessionId,
    sum_info: { sum: 2_000, currency_code: 'rub' },
  });
  const chargedBack = await until(
    'the chargeback is recorded',
    async () => (await s.call('GET', `/v1/sessions/${sessionId}`)).body,
    (v) => v.totals.chargedBack === 2_000,
  );
  expect(chargedBack).toMatchObject({ phase: 'succeeded', final: true, totals: { refunded: 3_000 } });
  expect(await ledger(sessionId)).toEqual([
    ['hold', 10_000],
    ['capture', 10_000],
    ['refund', 3_000],
    ['chargeback', 2_000],
  ]);
  const types = (await s.call('GET', `/v1/events?session_id=${sessionId}`)).body.events.map(
    (e: { type: string }) => e.type,
  );
  expect(types).toEqual(
    expect.arrayContaining([
      'session.created',
      'session.succeeded',
      'session.refunded',
      'session.chargeback',
    ]),
  );
  expect(new Set(types.filter((t: string) => t === 'session.refunded')).size).toBe(1);

  // Its webhook audit trail once the workflows are gone again: every entry, the chargeback's included.
  await closedRun(sessionId);
  expect(await deleteClosedExecutions()).toBeGreaterThanOrEqual(1);
  const audit = await s.call('GET', `/v1/sessions/${sessionId}/provider-events`);
  expect(audit.status).toBe(200);
  const applied = (audit.body.events as { via: string; outcome: string; receivedAt: string }[]).filter(
    (e) => e.via === 'webhook' && e.outcome === 'applied',
  );
  expect(applied.some((e) => Date.parse(e.receivedAt) >= chargebackAt)).toBe(true);
});

test('a payout after retention: read, found, repeated without a new provider session, its events listed', async () => {
  const reference = ref('ret-po');
  const body = {
    reference,
    amount: rub(700),
    destination: { type: 'card', card: { card_number: FRICTIONLESS } },
  };
  const created = await s.call('POST', '/v1/payouts?wait=15000', { body });
  expect(created.status).toBe(201);
  const sessionId = created.body.sessionId as string;
  await until(
    'the payout succeeds',
    async () => (await s.call('GET', `/v1/sessions/${sessionId}`)).body,
    (v) => v.phase === 'succeeded',
  );
  await closedRun(sessionId);
  await deleteClosedExecutions();
  await afterRetention({ sessionId, reference, create: () => s.call('POST', '/v1/payouts', { body }) });
  expect(await ledger(sessionId)).toEqual([['payout', 700]]);
});

test('a subscription with two charges after retention: read with its charges, found by reference, its events listed', async () => {
  const first = ref('ret-sub-first');
  const paid = await s.call('POST', '/v1/checkouts?wait=15000', {
    body: {
      method: 'card',
      reference: first,
      amount: rub(100),
      card: card(FRICTIONLESS),
      allowRecurring: true,
      customer: { user_id: 'u1' },
    },
  });
  expect(paid.status).toBe(201);
  const token = (
    await until(
      'the first payment succeeds',
      async () => (await s.call('GET', `/v1/sessions/${paid.body.sessionId}`)).body,
      (v) => v.phase === 'succeeded',
    )
  ).recurringToken as string;
  expect(token).toMatch(/^rt_/);

  const reference = ref('ret-sub');
  const started = await s.call('POST', '/v1/subscriptions', {
    body: {
      reference,
      token,
      amount: rub(1_000),
      schedule: { interval: 'second', count: 2 },
      customer: { user_id: 'u1' },
    },
  });
  expect(started.status).toBe(201);
  const id = started.body.subscriptionId as string;
  await until(
    'two periods are paid',
    async () => (await s.call('GET', `/v1/subscriptions/${id}`)).body,
    (v) => v.totals.succeeded >= 2,
  );
  expect((await s.call('POST', `/v1/subscriptions/${id}/cancel`, { body: {} })).status).toBe(200);
  await closedRun(id);
  const ended = (await s.call('GET', `/v1/subscriptions/${id}`)).body;
  await deleteClosedExecutions();
  await expect(s.stack.temporal.workflow.getHandle(id).describe()).rejects.toBeInstanceOf(
    WorkflowNotFoundError,
  );

  const read = await s.call('GET', `/v1/subscriptions/${id}`);
  expect(read.status).toBe(200);
  expect(read.body).toEqual(ended);
  expect(read.body).toMatchObject({ status: 'canceled', reference });
  expect(read.body.charges.filter((c: { outcome: string }) => c.outcome === 'succeeded').length).toBe(
    read.body.totals.succeeded,
  );
  const found = await s.call('GET', `/v1/subscriptions?reference=${encodeURIComponent(reference)}`);
  expect(
    found.body.subscriptions.map((x: { subscriptionId: string; status: string }) => [
      x.subscriptionId,
      x.status,
    ]),
  ).toEqual([[id, 'canceled']]);
  const types = (await s.call('GET', `/v1/events?subscription_id=${id}`)).body.events.map(
    (e: { type: string }) => e.type,
  );
  expect(types).toEqual(
    expect.arrayContaining(['subscription.created', 'subscription.charged', 'subscription.canceled']),
  );
});
