/**
 * `paysaga worker` as a real child process for end-to-end tests: configured only by environment
 * variables (against the run's Temporal server and a test sandbox), running the shared workflow bundle.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import type { TestSandbox } from './sandbox';
import { sharedWorkflowBundlePath, testDeployment, testAddress, testNamespace } from './temporal';
import { redactPans } from '../../provider/schemas/card';
import { LOOPBACK_ALLOWED } from './outbound';

const BIN = path.resolve(__dirname, '../../bin/paysaga.js');

/** Test output never shows a card number, even one a defect logged (session ids stay readable). */
const withoutCardNumbers = redactPans;

export interface WorkerProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** stdout and stderr so far. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once the worker logs `worker polling`; rejects if it exits first or after `timeoutMs`. */
  polling(timeoutMs?: number): Promise<void>;
}

export function spawnWorkerProcess(
  sandbox: TestSandbox,
  taskQueue: string,
  env: Record<string, string> = {},
): WorkerProcess {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: testAddress(),
      TEMPORAL_NAMESPACE: testNamespace(),
      PAYSAGA_TASK_QUEUE: taskQueue,
      PAYSAGA_DEPLOYMENT: testDeployment(taskQueue),
      PAYSAGA_PROVIDER_URL: sandbox.url,
      PAYSAGA_PROJECT_ID: sandbox.projectId,
      PAYSAGA_PARTNER_PRIVATE_KEY: sandbox.keys.paths.partnerPrivate,
      PAYSAGA_WORKFLOW_BUNDLE: sharedWorkflowBundlePath(),
      PAYSAGA_LOG_LEVEL: 'debug',
      // Tests' event receivers listen on loopback over plain http (as under `paysaga dev`).
      PAYSAGA_EVENT_ALLOW_HTTP: 'true',
      // Unless a test gives PAYSAGA_CODEC_KEYS: payloads in clear, as the test clients read them.
      PAYSAGA_ALLOW_UNENCRYPTED: 'true',
      PAYSAGA_EVENT_ALLOW_HOSTS: LOOPBACK_ALLOWED.join(','),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => out,
    exited,
    async polling(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!out.includes('worker polling')) {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`the worker exited before polling:\n${withoutCardNumbers(out)}`);
        if (Date.now() > deadline)
          throw new Error(`the worker did not poll within ${timeoutMs} ms:\n${withoutCardNumbers(out)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}
