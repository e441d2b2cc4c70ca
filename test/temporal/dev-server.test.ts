/**
 * Acceptance test of the Temporal toolchain: a dev server of our own, started with the CLI binary that
 * cli/temporal-cli.ts resolves, runs a real workflow and is gone after teardown.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { resolveTemporalCli, toServerExecutable } from '../../cli/temporal-cli';
import { PAYSAGA_SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import { trivialWorkflow } from '../fixtures/trivial-workflow';
import { uniqueTaskQueue, uniqueWorkflowId } from '../helpers/temporal';

/** Pids of `temporal server start-dev` processes listening on `port` (Linux: reads /proc). */
function devServerPids(port: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // exited meanwhile
    }
    if (!argv.includes('start-dev')) continue;
    const portIdx = argv.indexOf('--port');
    const hasPort = (portIdx >= 0 && argv[portIdx + 1] === String(port)) || argv.includes(`--port=${port}`);
    if (hasPort) pids.push(Number(entry));
  }
  return pids;
}

/** True if the process is still there and not a zombie. */
function alive(pid: number): boolean {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return !/^State:\s+Z/m.test(status);
  } catch {
    return false;
  }
}

function acceptsConnections(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitFor(condition: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const onLinux = process.platform === 'linux';

describe('Temporal dev server started through cli/temporal-cli.ts', () => {
  test('runs a workflow, registers our search attributes, and leaves no process behind', async () => {
    const cli = resolveTemporalCli();
    const executable = toServerExecutable(cli);
    if (cli.path) expect(executable).toEqual({ type: 'existing-path', path: cli.path });

    const env = await TestWorkflowEnvironment.createLocal({
      server: { executable, ip: '127.0.0.1', searchAttributes: PAYSAGA_SEARCH_ATTRIBUTES },
    });
    const [host, portText] = env.address.split(':');
    const port = Number(portText);
    expect(host).toBe('127.0.0.1');
    expect(port).toBeGreaterThan(0);

    let pids: number[] = [];
    try {
      if (onLinux) {
        pids = devServerPids(port);
        expect(pids).toHaveLength(1);
        if (cli.path) {
          expect(fs.realpathSync(`/proc/${pids[0]}/exe`)).toBe(fs.realpathSync(cli.path));
        }
      }

      const { customAttributes } = await env.connection.operatorService.listSearchAttributes({
        namespace: env.namespace ?? 'default',
      });
      for (const key of PAYSAGA_SEARCH_ATTRIBUTES) {
        expect(Object.keys(customAttributes ?? {})).toContain(key.name);
      }

      const taskQueue = uniqueTaskQueue('dev-server');
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowsPath: path.join(__dirname, '..', 'fixtures', 'trivial-workflow.ts'),
      });
      const result = await worker.runUntil(
        env.client.workflow.execute(trivialWorkflow, {
          taskQueue,
          workflowId: uniqueWorkflowId('trivial'),
          args: ['paysaga'],
        }),
      );
      expect(result).toBe('hello, paysaga');
    } finally {
      await env.teardown();
    }

    expect(await waitFor(async () => !(await acceptsConnections('127.0.0.1', port)), 10_000)).toBe(true);
    if (onLinux) {
      expect(await waitFor(() => pids.every((pid) => !alive(pid)), 10_000)).toBe(true);
      expect(devServerPids(port)).toEqual([]);
    }
  });
});
