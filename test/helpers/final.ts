/**
 * Waiting for a session's result in tests: looks at the session (its query) until its phase is final,
 * whatever its workflow does afterwards (it keeps following the session for `followMs`). Reads the
 * workflow itself (a closed run answers its query): what the API shows from the store is tested through
 * the API.
 */
import type { Client } from '@temporalio/client';
import { sessionQuery } from '../../common/messages';
import type { SessionView } from '../../common/views';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function finalView(temporal: Client, sessionId: string, ms = 90_000): Promise<SessionView> {
  const deadline = Date.now() + ms;
  const handle = temporal.workflow.getHandle(sessionId);
  let view: SessionView | undefined;
  for (let pause = 25; ; pause = Math.min(pause * 2, 250)) {
    view = await handle.query(sessionQuery);
    if (view.final) return view;
    if (Date.now() > deadline)
      throw new Error(`session ${sessionId} is not final after ${ms} ms: ${JSON.stringify(view)}`);
    await sleep(pause);
  }
}
