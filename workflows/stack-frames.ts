/**
 * Workflow code captures no stack frames (V8's `Error.stackTraceLimit`, for this workflow context only:
 * the worker's own code keeps its stacks).
 *
 * Why: the SDK takes a stack trace of every promise a workflow makes (its promise hook, for the
 * stack-trace query) and maps each frame through the bundle's source map. A card checkout makes about
 * 240 promises, most of them inside the SDK (conditions, timers, local activities, cancellation scopes),
 * so with V8's default of 10 frames that hook cost more than the workflow's own code:
 * `npm run bench -- replay` measured 25 ms of workflow-thread time per checkout at 10 frames, 17 ms at
 * 3 and 9.6 ms at 0; `npm run bench -- sessions` went from 0.29-0.33 of the floor to 0.43 with this and
 * the start report that no longer waits for nothing (bench/RESULTS.md, stop 34). For the session's
 * waits (a condition with a timeout) the SDK's own frames filled all ten anyway.
 *
 * What it costs: an error thrown by workflow code carries its message and no location, and the stack-trace
 * query in the Temporal UI shows no frames. Failures paysaga means to raise are typed
 * (`ApplicationFailure` with a `type`, common/failures.ts) and say what went wrong without a stack. To
 * chase a bug inside workflow code, raise the limit here (10 is V8's default) and run the test again.
 *
 * Loaded first by workflows/index.ts, which the worker preloads once per workflow thread
 * (workers/workflow-bundle-options.ts): set before the SDK freezes the context's globals.
 */
Error.stackTraceLimit = 0;
