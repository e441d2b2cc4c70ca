// Preloaded (`node --expose-gc -r bench/lib/probe.js <root>/cli/main.ts api|worker`) into a paysaga
// process that a benchmark starts with child_process.fork, whatever version of paysaga <root> holds:
//
// - TypeScript runs from source (scripts/ts-hook.js), so no dist/ has to be built for either version;
// - every Temporal client Connection the process opens gets one more gRPC interceptor that records each
//   call's method under the HTTP request during which it was made (AsyncLocalStorage entered from the
//   `http.server.request.start` diagnostics channel: every promise of that request's handler keeps it),
//   or under "(no request)" for calls made outside any request;
// - over the IPC channel: {type: 'calls'} answers and empties the record of finished HTTP requests
//   (recorded from the first such message on),
//   {type: 'memory'} answers process.memoryUsage() after a full GC; {type: 'loop'} answers how long the
//   main thread's event loop was held up (its delay, ms) and the main thread's garbage collections since
//   the last {type: 'loop'}, and starts counting again; {type: 'threads'} answers each worker thread's
//   V8 heap after a full GC there (the Temporal SDK's workflow thread, the embedded store's), read through
//   the inspector's NodeWorker domain, since process.memoryUsage() sees only the main thread's heap.
'use strict';
require('../../scripts/ts-hook');
const dc = require('node:diagnostics_channel');
const { AsyncLocalStorage } = require('node:async_hooks');

const requestContext = new AsyncLocalStorage();
/** Finished requests: {method, path, status, calls: [grpc method names]}. */
let finished = [];
/** Calls outside any request, by gRPC method. */
let outside = {};

// Requests are recorded once a benchmark has asked for them ({type: 'calls'}): the others measure this
// process's memory, which a record nobody reads would grow.
let recording = false;

dc.subscribe('http.server.request.start', ({ request, response }) => {
  if (!recording) return;
  const record = {
    method: request.method,
    path: request.url.split('?')[0],
    query: request.url.split('?')[1] ?? '',
    calls: [],
  };
  requestContext.enterWith(record);
  response.once('finish', () => {
    record.status = response.statusCode;
    finished.push(record);
  });
});

function countingInterceptor(options, nextCall) {
  const method = options.method_definition.path.split('/').pop();
  const record = requestContext.getStore();
  if (record) record.calls.push(method);
  else outside[method] = (outside[method] ?? 0) + 1;
  return nextCall(options);
}

const temporalClient = require('@temporalio/client');
const { Connection, makeGrpcRetryInterceptor, defaultGrpcRetryOptions } = temporalClient;
// Connection.connect opens through Connection.lazy: patching lazy covers both.
const lazy = Connection.lazy;
Connection.lazy = function withCounter(options = {}) {
  // Outermost, so a call the SDK's retry interceptor repeats is counted once (the default list kept).
  const interceptors = options.interceptors ?? [makeGrpcRetryInterceptor(defaultGrpcRetryOptions())];
  return lazy.call(this, { ...options, interceptors: [countingInterceptor, ...interceptors] });
};

// The event loop's delay and the GC pauses of the main thread, since the last {type: 'loop'}.
const { monitorEventLoopDelay, PerformanceObserver } = require('node:perf_hooks');
const LOOP_RESOLUTION_MS = 10;
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
loopDelay.enable();
let gcPauses = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push(e.duration);
}).observe({ entryTypes: ['gc'] });

function loopReport() {
  // The histogram holds the time between its timer's ticks: the resolution itself is no delay.
  const ms = (ns) => Math.max(0, Math.round((ns / 1e6 - LOOP_RESOLUTION_MS) * 100) / 100);
  const sorted = [...gcPauses].sort((a, b) => a - b);
  const report = {
    delayP50Ms: ms(loopDelay.percentile(50)),
    delayP99Ms: ms(loopDelay.percentile(99)),
    delayMaxMs: ms(loopDelay.max),
    gcCount: sorted.length,
    gcTotalMs: Math.round(sorted.reduce((a, b) => a + b, 0)),
    gcMaxMs: Math.round((sorted.at(-1) ?? 0) * 10) / 10,
  };
  loopDelay.reset();
  gcPauses = [];
  return report;
}

/** Each worker thread's title, script and V8 heap (used, total bytes) after a full GC in it. */
async function threadHeaps() {
  const inspector = require('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
  const workers = [];
  const pending = new Map();
  let nextId = 1;
  session.on('NodeWorker.attachedToWorker', ({ params }) => workers.push(params));
  session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
    const m = JSON.parse(params.message);
    const key = `${params.sessionId}:${m.id}`;
    pending.get(key)?.(m.result ?? {});
    pending.delete(key);
  });
  const ask = (sessionId, method) =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(`${sessionId}:${id}`, resolve);
      void post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method }) });
    });
  try {
    // Attached workers are announced during enable; a turn of the event loop lets the last ones in.
    await post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    await new Promise((r) => setTimeout(r, 100));
    const heaps = [];
    for (const w of workers) {
      await ask(w.sessionId, 'HeapProfiler.collectGarbage');
      const { usedSize, totalSize } = await ask(w.sessionId, 'Runtime.getHeapUsage');
      heaps.push({ title: w.workerInfo.title, url: w.workerInfo.url, usedSize, totalSize });
    }
    return heaps;
  } finally {
    await post('NodeWorker.disable').catch(() => undefined);
    session.disconnect();
  }
}

process.on('message', (m) => {
  if (!m || typeof m !== 'object') return;
  if (m.type === 'calls') {
    recording = true;
    process.send({ type: 'calls', id: m.id, requests: finished, outside });
    finished = [];
    outside = {};
  } else if (m.type === 'loop') {
    process.send({ type: 'loop', id: m.id, loop: loopReport() });
  } else if (m.type === 'memory') {
    if (typeof global.gc === 'function') {
      global.gc();
      global.gc();
    }
    process.send({ type: 'memory', id: m.id, memory: process.memoryUsage() });
  } else if (m.type === 'threads') {
    threadHeaps().then(
      (threads) => process.send({ type: 'threads', id: m.id, threads }),
      (err) => process.send({ type: 'threads', id: m.id, threads: [], error: String(err) }),
    );
  }
});
// The IPC channel must not keep the process alive once paysaga itself has shut down.
process.channel?.unref();
