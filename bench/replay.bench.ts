/**
 * The workflow thread's cost per session alone: replays histories saved by the sessions benchmark
 * (`BENCH_HISTORIES_DIR=<dir> npm run bench -- sessions`) many times with the SDK's replayer, which runs
 * workflow code as a worker does (the reusable V8 context, the SDK's promise hook) but in this thread and
 * with no server, store or sandbox. Prints per replayed session: the wall time, the time of the bundle's
 * first load per workflow (`initRuntime`), the activations, and, with BENCH_PROMISES=1, the promises the
 * workflow code made (the SDK takes a stack trace of each one for its stack-trace query, a sizeable part
 * of a session's CPU).
 *
 *   BENCH_HISTORIES_DIR=/tmp/h BENCH_N=40 npm run bench -- sessions
 *   BENCH_HISTORIES_DIR=/tmp/h BENCH_TIMES=10 npm run bench -- replay
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { workflowBundleOptions } from '../workers/workflow-bundle-options';
import { machineLine, round1 } from './support';

/** Calls into the workflow context by the SDK's function name (activate, initRuntime, ...): count, ms. */
function countVmCalls(): Map<string, { n: number; ms: number }> {
  const calls = new Map<string, { n: number; ms: number }>();
  const run = vm.Script.prototype.runInContext;
  vm.Script.prototype.runInContext = function (this: vm.Script, context, options) {
    const args = (context as { __temporal_args?: unknown[] }).__temporal_args;
    const started = process.hrtime.bigint();
    try {
      return run.call(this, context, options);
    } finally {
      const name = String(args?.[1] ?? 'other');
      const c = calls.get(name) ?? { n: 0, ms: 0 };
      c.n++;
      c.ms += Number(process.hrtime.bigint() - started) / 1e6;
      calls.set(name, c);
    }
  };
  return calls;
}

/** Promises made by workflow code: a stack frame in the bundle (slow: only with BENCH_PROMISES=1). */
function countWorkflowPromises(bundleFile: string): { count: number } {
  const counter = { count: 0 };
  v8.promiseHooks.createHook({
    init: () => {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 30;
      const stack = new Error().stack ?? '';
      Error.stackTraceLimit = limit;
      if (stack.includes(bundleFile)) counter.count++;
    },
  });
  return counter;
}

export async function main(): Promise<void> {
  const dir = process.env.BENCH_HISTORIES_DIR;
  if (!dir) throw new Error('BENCH_HISTORIES_DIR: a folder of histories the sessions benchmark saved');
  const times = Number(process.env.BENCH_TIMES ?? 10);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.pb'));
  if (files.length === 0) throw new Error(`no .pb histories in ${dir}`);
  const histories = files.map((f) => ({
    workflowId: f.split('.')[0]!,
    history: temporal.api.history.v1.History.decode(fs.readFileSync(path.join(dir, f))),
  }));
  const { code } = await bundleWorkflowCode({
    ...workflowBundleOptions(),
    logger: new DefaultLogger('WARN'),
  });
  const bundleFile = path.join(fs.mkdtempSync(path.join(dir, 'bundle-')), 'workflow-bundle.js');
  fs.writeFileSync(bundleFile, code);
  const calls = countVmCalls();
  const promises = process.env.BENCH_PROMISES === '1' ? countWorkflowPromises(bundleFile) : undefined;
  const all = Array.from({ length: times }, () => histories).flat();
  const started = Date.now();
  let n = 0;
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: { codePath: bundleFile }, replayName: 'bench' },
    all,
  )) {
    if (result.error) throw result.error;
    n++;
  }
  const wallMs = Date.now() - started;
  fs.rmSync(path.dirname(bundleFile), { recursive: true, force: true });
  console.log(`${machineLine()}; ${histories.length} histories x ${times}`);
  const per = (x: number) => round1(x / n);
  console.table({
    'wall ms per replay': { value: per(wallMs) },
    'activations per replay': { value: per(calls.get('activate')?.n ?? 0) },
    'ms in activations per replay': { value: per(calls.get('activate')?.ms ?? 0) },
    'ms loading the bundle per workflow (initRuntime)': { value: per(calls.get('initRuntime')?.ms ?? 0) },
    ...(promises ? { 'workflow promises per replay': { value: per(promises.count) } } : {}),
  });
}
