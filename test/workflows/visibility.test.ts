/**
 * What an operator sees in the Temporal UI (workflows/session/recorder.ts): a session's run records no
 * patch, upserts a search attribute only when its value changes, and shows the phase the session waits
 * in (the payer, then the result) once the workflow task that reached it is done.
 */
import type { temporal } from '@temporalio/proto';
import { PaymentStatus } from '../../common/search-attributes';
import { completeThreeDs } from '../helpers/payer';
import { startStack, type TestStack } from '../helpers/stack';
import { FRICTIONLESS, card, references, rub, sessionHelpers } from '../helpers/workflow-test';

const ref = references('vis');
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Each upsert in the history as [attribute, JSON value], and the patch markers' ids. */
function visibilityOf(events: HistoryEvent[]): { upserts: [string, string][]; patches: string[] } {
  const upserts: [string, string][] = [];
  const patches: string[] = [];
  for (const e of events) {
    const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    for (const [key, payload] of Object.entries(fields ?? {}))
      upserts.push([key, Buffer.from(payload.data ?? []).toString('utf8')]);
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_patch') {
      const id = marker.details?.['patch-data']?.payloads?.[0]?.data;
      patches.push(id ? (JSON.parse(Buffer.from(id).toString('utf8')) as { id: string }).id : '?');
    }
  }
  return { upserts, patches };
}

/** The values a search attribute took in order, starting from the one the run was started with. */
function valuesOf(events: HistoryEvent[], key: string): string[] {
  const started = events[0]?.workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields?.[key];
  const first = started ? [Buffer.from(started.data ?? []).toString('utf8')] : [];
  return [
    ...first,
    ...visibilityOf(events)
      .upserts.filter(([k]) => k === key)
      .map(([, v]) => v),
  ];
}

describe('search attributes of a new session', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ webhooks: true, settings: { followMs: 500 } });
  });
  afterAll(async () => {
    await stack?.close();
  });
  const { finished, startThreeDs } = sessionHelpers(() => stack);

  async function historyOf(sessionId: string): Promise<HistoryEvent[]> {
    const history = await stack.temporal.workflow.getHandle(sessionId).fetchHistory();
    return history.events ?? [];
  }

  async function statusShown(sessionId: string): Promise<string | undefined> {
    const described = await stack.temporal.workflow.getHandle(sessionId).describe();
    return described.typedSearchAttributes.get(PaymentStatus);
  }

  it('a frictionless checkout: no patch, each status once, the result shown at the end', async () => {
    const started = await stack.payments.sessions.startCardCheckout({
      reference: ref('card'),
      amount: rub(1_000),
      card: card(FRICTIONLESS),
      customer: { user_id: 'u1' },
    });
    const result = await finished(started.sessionId);
    expect(result.phase).toBe('succeeded');
    const events = await historyOf(started.sessionId);
    // The SDK's own internal patches (`__sdk_internal_patch_number:N`) are its business, not ours.
    const ours = visibilityOf(events).patches.filter((id) => !id.startsWith('__sdk_internal'));
    expect(ours).toEqual([]);
    const statuses = valuesOf(events, 'PaymentStatus');
    // Never the same value twice in a row: an upsert that changes nothing is not made.
    statuses.forEach((s, i) => expect(i === 0 || s !== statuses[i - 1]).toBe(true));
    expect(statuses.at(-1)).toBe(JSON.stringify('succeeded'));
    expect(await statusShown(started.sessionId)).toBe('succeeded');
    expect(visibilityOf(events).upserts.filter(([k]) => k === 'TemporalChangeVersion')).toEqual([]);
  });

  it('3-D Secure: awaiting_payer is shown while the payer is away, then the result', async () => {
    const started = await startThreeDs(ref('3ds'));
    expect(started.phase).toBe('awaiting_payer');
    // The redirect is answered when the session reached it; the workflow task that got there is done
    // within moments, and the status shown is then the one the session waits in.
    const deadline = Date.now() + 10_000;
    let shown = await statusShown(started.sessionId);
    while (shown !== 'awaiting_payer' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      shown = await statusShown(started.sessionId);
    }
    expect(shown).toBe('awaiting_payer');
    await completeThreeDs(started.userAction, '12345');
    await stack.payments.sessions.notifyPayerReturned(started.sessionId);
    expect((await finished(started.sessionId)).phase).toBe('succeeded');
    const statuses = valuesOf(await historyOf(started.sessionId), 'PaymentStatus');
    statuses.forEach((s, i) => expect(i === 0 || s !== statuses[i - 1]).toBe(true));
    expect(statuses).toContain(JSON.stringify('awaiting_payer'));
    expect(statuses.at(-1)).toBe(JSON.stringify('succeeded'));
    expect(await statusShown(started.sessionId)).toBe('succeeded');
  });
});
