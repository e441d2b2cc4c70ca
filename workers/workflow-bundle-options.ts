/**
 * How paysaga's workflow code is bundled, in one place for every bundler call (the worker bundling at
 * start, `npm run build`, the benchmarks and the test stacks), so that each runs the code production
 * runs.
 *
 * `preloadModules` loads a module once per workflow thread for all its workflows instead of once per
 * workflow: zod (about 2.5 ms a workflow to load), the message schemas built from it
 * (common/message-schemas.ts: built on first use, once per copy) and all of paysaga's workflow code
 * (workflows/ and the common/ modules it imports). Each copy of a module is closures, classes and
 * objects of its own: with a copy per workflow, a checkout waiting for its payer kept 204 KiB in the
 * workflow thread's heap, with the copies shared 100 KiB (`npm run bench -- dev`, bench/RESULTS.md).
 * Only modules that hold no workflow's state may be listed (the SDK's rule for this option): nothing
 * at module level in workflows/ and common/ changes after load (eslint.config.mjs refuses a
 * module-level `let` or `var` there; common/billing-calendar.ts keeps a cache of date formatters, the
 * same for every workflow), and the SDK freezes what a preloaded module exports, so a workflow that
 * changed an exported object would fail its task instead of touching another's. The test suite
 * bundles with these options too (test/global-setup.ts), so every workflow test runs the shared copies.
 */
import type { BundleOptions } from '@temporalio/worker';

type WebpackConfig = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/**
 * The SDK compiles workflow TypeScript for ES2017 (swc), so every object spread and optional chain
 * becomes a helper call. The workflow thread runs on the worker's Node (20+, ES2022), as tsconfig.json
 * targets: compiled for ES2022 the bundle keeps them native (the same semantics tsc's build has).
 */
function es2022(config: WebpackConfig): WebpackConfig {
  for (const rule of config.module?.rules ?? []) {
    const use = rule && typeof rule === 'object' ? rule.use : undefined;
    const options = use && typeof use === 'object' && !Array.isArray(use) ? use.options : undefined;
    const jsc =
      options && typeof options === 'object' ? (options as { jsc?: { target?: string } }).jsc : undefined;
    if (jsc?.target) jsc.target = 'es2022';
  }
  return config;
}

/**
 * The bundle's source map maps lines, not columns. The SDK names a frame of a stack trace (the Temporal
 * UI's Stack Trace tab, an error's stack) by the identifier the source map gives at its position, else
 * by the function V8 runs: with columns, a waiting checkout's frames read `at until (steps/payer.ts:23:26)`
 * or `at session (checkout.ts:29:22)`, the names of what the line calls; with lines only, `at payerAction
 * (steps/payer.ts:22:0)` and `at checkoutWorkflow (checkout.ts:29:0)`, the step it waits in.
 */
function linesOnlySourceMap(config: WebpackConfig): WebpackConfig {
  config.devtool = 'inline-cheap-module-source-map';
  return config;
}

export function workflowBundleOptions(): Pick<
  BundleOptions,
  'workflowsPath' | 'workflowInterceptorModules' | 'preloadModules' | 'webpackConfigHook'
> {
  return {
    workflowsPath: require.resolve('../workflows'),
    workflowInterceptorModules: [require.resolve('../workflows/query-guard')],
    preloadModules: ['zod', require.resolve('../common/message-schemas'), require.resolve('../workflows')],
    webpackConfigHook: (config) => linesOnlySourceMap(es2022(config)),
  };
}
