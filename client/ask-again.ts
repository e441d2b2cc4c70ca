/**
 * A query answered "ask again" (workflows/query-guard.ts: news for the workflow arrived with the query,
 * and the worker takes it in its workflow task first) is asked again by paysaga's own Temporal clients,
 * so that no caller sees it. People in the Temporal UI see it once and refresh.
 */
import { QueryNotRegisteredError, type WorkflowClientInterceptor } from '@temporalio/client';
import { QUERY_CAME_WITH_NEWS } from '../common/messages';

/** A few tries, a moment apart: the worker answers as soon as it has taken the news in. */
const TRIES = 5;
const FIRST_PAUSE_MS = 50;

/** The query was answered "ask again" by the workflow's worker. */
export function askAgain(err: unknown): boolean {
  return err instanceof QueryNotRegisteredError && err.message === QUERY_CAME_WITH_NEWS;
}

const askingAgain: WorkflowClientInterceptor = {
  async query(input, next) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await next(input);
      } catch (err) {
        if (!askAgain(err) || attempt >= TRIES) throw err;
        await new Promise((resolve) => setTimeout(resolve, FIRST_PAUSE_MS * 2 ** (attempt - 1)));
      }
    }
  },
};

/** The interceptors of every Temporal client paysaga makes (`new Client({ ..., interceptors })`). */
export function clientInterceptors(): { workflow: WorkflowClientInterceptor[] } {
  return { workflow: [askingAgain] };
}
