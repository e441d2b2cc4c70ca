/**
 * Waiting for a session's result in tests: looks at the session (its query) until its phase is final,
 * then until it is at rest with it (shown in its search attributes, its record written: no record write
 * in flight), as a caller reading the store or the UI next expects; whatever its workflow does afterwards
 * (it keeps following the session for `followMs`). Reads the workflow itself (a closed run answers its
 * query): what the API shows from the store is tested through the API. A look that fails for a while
 * (a query no worker answered in time: the worker restarting, or a query lost beside another one of the
 * same run, client/query.ts) is taken again within `ms`, as a caller retries a retryable answer.
 */
import type { Client } from '@temporalio/client';
import { sessionQuery } from '../../common/messages';
import { PaymentStatus } from '../../common/search-attributes';
import type { SessionView } from '../../common/views';
import { isTransientQueryFailure } from '../../client/query';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function finalView(temporal: Client, sessionId: string, ms = 90_000): Promise<SessionView> {
  const deadline = Date.now() + ms;
  const handle = temporal.workflow.getHandle(sessionId);
  const late = (view: unknown, what: string) =>
    new Error(`session ${sessionId} is not ${what} after ${ms} ms: ${JSON.stringify(view)}`);
  const look = async (): Promise<SessionView | undefined> => {
    try {
      return await handle.query(sessionQuery);
    } catch (err) {
      if (!isTransientQueryFailure(err) || Date.now() > deadline) throw err;
      return undefined;
    }
  };
  let view: SessionView | undefined;
  for (let pause = 25; ; pause = Math.min(pause * 2, 250)) {
    view = await look();
    if (view?.final) break;
    if (Date.now() > deadline) throw late(view, 'final');
    await sleep(pause);
  }
  for (let pause = 25; ; pause = Math.min(pause * 2, 250)) {
    const d = await handle.describe();
    const writing = (d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'recordSession');
    if (
      d.status.name !== 'RUNNING' ||
      (d.typedSearchAttributes.get(PaymentStatus) === view.phase && !writing)
    ) {
      const atRest = await look();
      if (atRest) return atRest;
    }
    if (Date.now() > deadline) throw late(view, 'at rest');
    await sleep(pause);
  }
}
