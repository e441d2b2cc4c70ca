/**
 * The run-wide history search of test/global-teardown.ts can fail: on a dev server of its own, a
 * workflow whose input carries a test card number is found, and a clean one is not.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { resolveTemporalCli, toServerExecutable } from '../../cli/temporal-cli';
import { trivialWorkflow } from '../fixtures/trivial-workflow';
import { scanAllHistories } from '../history-scan';
import { uniqueTaskQueue } from '../helpers/temporal';
import { TEST_CARD } from '../../sandbox/test-cards';

it('finds a card number in a workflow history, and nothing in a clean one', async () => {
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: toServerExecutable(resolveTemporalCli()), ip: '127.0.0.1' },
  });
  try {
    const taskQueue = uniqueTaskQueue('scan');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: require.resolve('../fixtures/trivial-workflow'),
    });
    await worker.runUntil(async () => {
      await env.client.workflow.execute(trivialWorkflow, { taskQueue, workflowId: 'clean', args: ['shop'] });
      await env.client.workflow.execute(trivialWorkflow, {
        taskQueue,
        workflowId: 'leaky',
        args: [{ card_number: TEST_CARD.visa } as never],
      });
    });
    // Visibility is eventually consistent: wait until both runs are listed.
    let scan = await scanAllHistories(env.client);
    for (let i = 0; i < 150 && scan.scanned < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      scan = await scanAllHistories(env.client);
    }
    expect(scan.scanned).toBe(2);
    expect(scan.findings.some((f) => f.startsWith('leaky') && f.includes('411111…1111'))).toBe(true);
    expect(scan.findings.some((f) => f.startsWith('leaky') && f.includes('"card_number":'))).toBe(true);
    expect(scan.findings.some((f) => f.startsWith('clean'))).toBe(false);
  } finally {
    await env.teardown();
  }
}, 120_000);
