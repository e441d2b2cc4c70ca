/**
 * A session whose workflow fails its tasks is told apart from Temporal being down: a
 * workflow with a bug (its signal handler throws a TypeError, so every task after the signal fails) is
 * described, and the API answers 503 `session_failing`, not `temporal_unavailable`.
 */
import * as path from 'node:path';
import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { toApiError } from '../../api/errors';
import { explainTemporalFailure, WorkflowTaskFailingError } from '../../client/workflow-health';
import { buggyWorkflow } from '../fixtures/trivial-workflow';
import { runTestWorker, uniqueWorkflowId } from '../helpers/temporal';

describe('a workflow failing its tasks', () => {
  it('is reported as failing with its attempt, not as Temporal unreachable', async () => {
    const workflowId = uniqueWorkflowId('ps_buggy');
    await runTestWorker(
      { workflowsPath: path.join(__dirname, '..', 'fixtures', 'trivial-workflow.ts') },
      async ({ client, taskQueue }) => {
        const handle = await client.workflow.start(buggyWorkflow, { taskQueue, workflowId });
        const timeout = new WorkflowUpdateRPCTimeoutOrCancelledError('update timed out');
        // Healthy: the original error stands.
        expect(await explainTemporalFailure(client, workflowId, timeout)).toBe(timeout);

        await handle.signal('poke');
        let explained: unknown = timeout;
        for (const deadline = Date.now() + 30_000; !(explained instanceof WorkflowTaskFailingError);) {
          if (Date.now() > deadline) throw new Error('the workflow task never showed a second attempt');
          await new Promise((r) => setTimeout(r, 200));
          explained = await explainTemporalFailure(client, workflowId, timeout);
        }
        const failing = explained as WorkflowTaskFailingError;
        expect(failing.attempt).toBeGreaterThanOrEqual(2);
        expect(failing.workflowId).toBe(workflowId);
        const api = toApiError(failing);
        expect([api.statusCode, api.code]).toEqual([503, 'session_failing']);
        expect(api.message).toContain('fails on every task');
        // A plain Temporal error on the same workflow is explained the same way.
        const service = new ServiceError('query failed');
        expect(await explainTemporalFailure(client, workflowId, service)).toBeInstanceOf(
          WorkflowTaskFailingError,
        );
        // Anything else is left as it is.
        const other = new Error('not Temporal');
        expect(await explainTemporalFailure(client, workflowId, other)).toBe(other);
        await handle.terminate('test over');
      },
    );
  });
});
