/**
 * Jest global setup: runs once per `jest` run, in jest's main process, before any test file.
 *
 *  1. Starts ONE Temporal dev server (the CLI binary chosen by cli/temporal-cli.ts) on a free port, with
 *     paysaga's search attributes registered, and exports its address and namespace to every test worker:
 *       TEMPORAL_TEST_ADDRESS    e.g. 127.0.0.1:41235
 *       TEMPORAL_TEST_NAMESPACE  default
 *  2. If workflows/index.ts exists, bundles the workflow code ONCE and exports the bundle's file path:
 *       PAYSAGA_TEST_WORKFLOW_BUNDLE        /tmp/paysaga-jest-XXXX/workflow-bundle.js
 *     A bundling error does not abort the run (unit tests still run); it is exported instead as
 *       PAYSAGA_TEST_WORKFLOW_BUNDLE_ERROR  and thrown by test/helpers/temporal.ts when a test needs the bundle.
 *
 *  3. Builds dist/ for the tests that spawn `bin/paysaga.js` (only when it is missing or stale).
 *  4. Starts ONE embedded store (PGlite served on a loopback port, store/embedded.ts) for the whole run:
 *       PAYSAGA_TEST_DATABASE_URL  postgres://postgres@127.0.0.1:PORT/postgres
 *     Each test stack takes a schema of its own in it (test/helpers/store.ts).
 *
 * test/global-teardown.ts stops the server and removes the temp dir (state kept on globalThis).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { workflowBundleOptions } from '../workers/workflow-bundle-options';
import { startLocalTemporal } from './helpers/local-temporal';
import { startEmbeddedStore, type EmbeddedStore } from '../store/embedded';

export interface PaysagaTestGlobals {
  env: TestWorkflowEnvironment;
  tempDir: string;
  store?: EmbeddedStore;
}

declare global {
  var __PAYSAGA_TEST__: PaysagaTestGlobals | undefined;
}

const ROOT = path.resolve(__dirname, '..');

function log(message: string): void {
  process.stderr.write(`[paysaga test setup] ${message}\n`);
}

export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const { env, namespace, cli } = await startLocalTemporal();
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-jest-'));
  globalThis.__PAYSAGA_TEST__ = { env, tempDir };
  const storeStarted = Date.now();
  const store = await startEmbeddedStore();
  globalThis.__PAYSAGA_TEST__.store = store;
  process.env.PAYSAGA_TEST_DATABASE_URL = store.url;
  log(`embedded store ${store.url} up in ${Date.now() - storeStarted} ms`);
  process.env.TEMPORAL_TEST_ADDRESS = env.address;
  process.env.TEMPORAL_TEST_NAMESPACE = namespace;
  log(`Temporal dev server ${env.address} up in ${Date.now() - started} ms (cli: ${cli})`);

  delete process.env.PAYSAGA_TEST_WORKFLOW_BUNDLE;
  delete process.env.PAYSAGA_TEST_WORKFLOW_BUNDLE_ERROR;
  const workflowsPath = path.join(ROOT, 'workflows', 'index.ts');
  if (fs.existsSync(workflowsPath)) {
    const bundleStarted = Date.now();
    try {
      // The options production bundles with (the shared modules preloaded once per workflow thread).
      const { code } = await bundleWorkflowCode({
        ...workflowBundleOptions(),
        workflowsPath,
        logger: new DefaultLogger('WARN'),
      });
      const bundlePath = path.join(tempDir, 'workflow-bundle.js');
      fs.writeFileSync(bundlePath, code);
      process.env.PAYSAGA_TEST_WORKFLOW_BUNDLE = bundlePath;
      log(`workflow bundle built in ${Date.now() - bundleStarted} ms: ${bundlePath}`);
    } catch (err) {
      const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
      process.env.PAYSAGA_TEST_WORKFLOW_BUNDLE_ERROR = message;
      log(`workflow bundle FAILED (tests that need it will fail): ${message}`);
    }
  }

  // Tests that spawn `bin/paysaga.js` run in parallel workers; each would build a stale or missing
  // dist/ itself (always missing on a fresh clone), two tsc runs writing the same files at once.
  // One build here, before any test starts, leaves them nothing to build.
  const buildStarted = Date.now();
  const built = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'paysaga.js'), '--version'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (built.status === 0) log(`dist/ ready in ${Date.now() - buildStarted} ms`);
  else log(`dist/ build FAILED (tests of the paysaga command will fail): ${built.stderr}`);
}
