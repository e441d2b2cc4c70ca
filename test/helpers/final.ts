/**
 * Waiting for a session's result in tests: long polls (the session's awaitChange Update) until its phase
 * is final, whatever its workflow does afterwards (it keeps following the session for `followMs`).
 */
import type { Client } from '@temporalio/client';
import { awaitSession } from '../../client/reads';
import type { SessionView } from '../../common/views';

export async function finalView(temporal: Client, sessionId: string, ms = 90_000): Promise<SessionView> {
  const deadline = Date.now() + ms;
  let view: SessionView | undefined;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0)
      throw new Error(`session ${sessionId} is not final after ${ms} ms: ${JSON.stringify(view)}`);
    // The first look reads the session as it is; each next one waits for a change after it.
    view = await awaitSession(temporal, sessionId, {
      timeoutMs: view ? Math.min(left, 20_000) : 0,
      ...(view ? { afterVersion: view.version } : {}),
    });
    if (view.final) return view;
  }
}
