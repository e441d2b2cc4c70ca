/**
 * How much of the worker's memory holds workflows (PAYSAGA_MAX_CACHED_WORKFLOWS). The SDK's default
 * sizes the workflow cache by the heap limit (about 2,300 workflows on a 24 GiB machine), and a cached
 * session costs about 170-270 KiB of the process's RSS: 67 KiB of the workflow thread's heap, about 120 KiB
 * of the SDK's native memory, the rest the SDK's buffers of each run in the main thread and the
 * allocators' slack (`npm run bench -- dev`), mostly while it only waits (for a payer, a decision, the end of its
 * follow-up): the cache then holds idle sessions and the RSS grows with them.
 * A smaller cache holds the sessions at work; one that wakes after eviction replays its history first
 * (tens of events: milliseconds). bench/memory.bench.ts measures both.
 */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 1_000;

export interface WorkerTuning {
  maxCachedWorkflows?: number;
}

/** PAYSAGA_MAX_CACHED_WORKFLOWS when set; createPaysagaWorker applies the default otherwise. */
export function workerTuningFromEnv(env: NodeJS.ProcessEnv): WorkerTuning {
  const raw = env.PAYSAGA_MAX_CACHED_WORKFLOWS;
  if (raw === undefined || raw === '') return {};
  const n = Number(raw);
  // The SDK needs room for at least two (one running, one being evicted).
  if (!Number.isSafeInteger(n) || n < 2)
    throw new Error(`PAYSAGA_MAX_CACHED_WORKFLOWS must be a whole number of at least 2, got ${raw}`);
  return { maxCachedWorkflows: n };
}
