/**
 * Waiting for a session's result in tests: long polls (the session's awaitChange Update) until its phase
 * is final, whatever its workflow does afterwards (it keeps following the session for `followMs`). Reads
 * the workflow itself (a closed run answers its query): what the API shows from the store is tested
 * through the API.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { awaitChangeUpdate, sessionQuery } from '../../common/messages';
import type { SessionView } from '../../common/views';

export async function finalView(temporal: Client, sessionId: string, ms = 90_000): Promise<SessionView> {
  const deadline = Date.now() + ms;
  const handle = temporal.workflow.getHandle(sessionId);
  let view: SessionView | undefined;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0)
      throw new Error(`session ${sessionId} is not final after ${ms} ms: ${JSON.stringify(view)}`);
    // The first look reads the session as it is; each next one waits for a change after it.
    try {
      view = view
        ? await handle.executeUpdate(awaitChangeUpdate, {
            args: [{ timeoutMs: Math.min(left, 20_000), afterVersion: view.version }],
          })
        : await handle.query(sessionQuery);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError) && !(err instanceof WorkflowUpdateFailedError)) throw err;
      view = await handle.query(sessionQuery);
    }
    if (view.final) return view;
  }
}
