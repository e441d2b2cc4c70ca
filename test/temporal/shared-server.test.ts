/** The shared dev server from test/global-setup.ts and the helpers in test/helpers/temporal.ts. */
import * as path from 'node:path';
import {
  AmountMinor,
  CurrencyCode,
  PaymentStatus,
  PAYSAGA_SEARCH_ATTRIBUTES,
} from '../../common/search-attributes';
import { greetAndTagWorkflow } from '../fixtures/trivial-workflow';
import type { GreetActivities } from '../fixtures/trivial-workflow';
import {
  connectTestClient,
  runTestWorker,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  uniqueWorkflowId,
} from '../helpers/temporal';

const activities: GreetActivities = {
  async greet(name) {
    return `hi ${name}`;
  },
};

describe('shared Temporal dev server', () => {
  test('global setup exported the address and namespace', () => {
    expect(testAddress()).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(testNamespace()).toBe('default');
  });

  test('has paysaga search attributes registered', async () => {
    const { client, close } = await connectTestClient();
    try {
      const { customAttributes } = await client.connection.operatorService.listSearchAttributes({
        namespace: testNamespace(),
      });
      for (const key of PAYSAGA_SEARCH_ATTRIBUTES)
        expect(Object.keys(customAttributes ?? {})).toContain(key.name);
    } finally {
      await close();
    }
  });

  test('runTestWorker runs workflows and activities on a unique task queue and cleans up', async () => {
    const workflowId = uniqueWorkflowId('greet');
    const seen = await runTestWorker(
      { activities, workflowsPath: path.join(__dirname, '..', 'fixtures', 'trivial-workflow.ts') },
      async ({ client, taskQueue }) => {
        expect(taskQueue).toMatch(/^test-/);
        const result = await client.workflow.execute(greetAndTagWorkflow, {
          taskQueue,
          workflowId,
          args: ['ann'],
        });
        const description = await client.workflow.getHandle(workflowId).describe();
        return { result, sa: description.typedSearchAttributes };
      },
    );
    expect(seen.result).toBe('hi ann');
    expect(seen.sa.get(PaymentStatus)).toBe('succeeded');
    expect(seen.sa.get(AmountMinor)).toBe(1050);
    expect(seen.sa.get(CurrencyCode)).toBe('EUR');
  });

  test('runTestWorker propagates errors from the test body and still shuts down', async () => {
    await expect(
      runTestWorker({ activities, taskQueue: uniqueTaskQueue('boom') }, async () => {
        throw new Error('body failed');
      }),
    ).rejects.toThrow('body failed');
  });

  test("workflowBundle 'shared' explains when there is no shared bundle", async () => {
    if (process.env.PAYSAGA_TEST_WORKFLOW_BUNDLE) return; // workflows/index.ts exists: covered by workflow tests
    await expect(runTestWorker({ workflowBundle: 'shared' }, async () => undefined)).rejects.toThrow(
      new Error('no shared workflow bundle: workflows/index.ts did not exist when the test run started'),
    );
  });
});
