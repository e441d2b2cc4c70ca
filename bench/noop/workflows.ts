/**
 * A card checkout with nothing in it (bench/checkouts.bench.ts): the same Temporal shape as paysaga's
 * checkout (workflows/reference.ts and workflows/checkout.ts), with activities that return at once and
 * no provider. Bundled on its own, for the benchmarks only.
 *
 *   reference: Update-with-Start (registration) -> activity initiate -> child session workflow (abandoned)
 *              -> keeps the reference (a long timer)
 *   session:   event `created` -> Update reportStart (the card's answer, then waits for the result)
 *              -> event `awaiting_approval` -> activity approve -> the provider's signals -> result
 *              -> event `succeeded` -> keeps following (a long timer)
 *   outbox:    `events-<session>`, signal-with-start per event; holds them until idle
 */
import * as wf from '@temporalio/workflow';
import type * as activities from './activities';

export interface NoopEvent {
  id: string;
  type: string;
  sequence: number;
  session_id: string;
}

export const registration = wf.defineUpdate<{ sessionId: string; created: boolean }, [{ requestId: string }]>(
  'registration',
);
export const reportStart = wf.defineUpdate<{ phase: string; version: number }, [{ timeoutMs: number }]>(
  'reportStart',
);
export const providerEvent = wf.defineSignal<[{ type: string }]>('providerEvent');
export const outboxEvent = wf.defineSignal<[NoopEvent]>('outboxEvent');

const acts = wf.proxyActivities<typeof activities>({
  startToCloseTimeout: '45s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 6 },
});

export interface NoopReferenceInput {
  reference: string;
  requestId: string;
  /** Signals the session waits for before its result (the provider's webhooks). */
  signals: number;
  keepMs: number;
  followMs: number;
}

export async function noopReferenceWorkflow(input: NoopReferenceInput): Promise<void> {
  let sessionId: string | undefined = undefined;
  wf.setHandler(registration, async ({ requestId }) => {
    await wf.condition(() => sessionId !== undefined);
    return { sessionId: sessionId!, created: requestId === input.requestId };
  });
  const opened = await acts.initiate(input.reference);
  await wf.startChild(noopCheckoutWorkflow, {
    workflowId: opened,
    args: [{ sessionId: opened, signals: input.signals, followMs: input.followMs }],
    parentClosePolicy: wf.ParentClosePolicy.ABANDON,
  });
  sessionId = opened;
  await wf.condition(() => false, input.keepMs);
}

export async function noopCheckoutWorkflow(input: {
  sessionId: string;
  signals: number;
  followMs: number;
}): Promise<void> {
  let phase = 'starting';
  let version = 0;
  let answered = false;
  let received = 0;
  let sequence = 0;
  let chain = Promise.resolve();
  // In order, without waiting (as paysaga's EventPublisher does).
  const publish = (type: string) => {
    const event = { id: `evt_${input.sessionId}_${++sequence}`, type, sequence, session_id: input.sessionId };
    chain = chain.then(() => acts.publishEvent(event));
  };
  wf.setHandler(providerEvent, () => {
    received++;
    version++;
  });
  wf.setHandler(reportStart, async ({ timeoutMs }) => {
    answered = true;
    version++;
    await wf.condition(() => phase === 'succeeded', timeoutMs);
    return { phase, version };
  });

  publish('session.created');
  await wf.condition(() => answered);
  phase = 'awaiting_approval';
  publish('session.awaiting_approval');
  await acts.approve(input.sessionId);
  await wf.condition(() => received >= input.signals);
  phase = 'succeeded';
  publish('session.succeeded');
  await chain;
  await wf.condition(() => false, input.followMs);
}

export async function noopOutboxWorkflow(input: { subject: string; idleMs: number }): Promise<NoopEvent[]> {
  const held: NoopEvent[] = [];
  wf.setHandler(outboxEvent, (e) => {
    if (!held.some((h) => h.id === e.id)) held.push(e);
  });
  for (let seen = -1; seen !== held.length;) {
    seen = held.length;
    await wf.condition(() => held.length !== seen, input.idleMs);
  }
  return held;
}
