/**
 * How paysaga's workflow code is bundled, in one place for every bundler call (the worker bundling at
 * start, `npm run build`, the benchmarks and the test stacks), so that each runs the code production
 * runs.
 *
 * `preloadModules` loads a module once per workflow thread for all its workflows instead of once per
 * workflow: zod (about 2.5 ms a workflow to load) and the message schemas built from it
 * (common/message-schemas.ts: built on first use, once per copy). Only modules that hold no workflow's
 * state may be listed (the SDK's rule for this option): both are pure, and so is what they import
 * (common/failures.ts, common/reasons.ts). The test suite bundles with these options too
 * (test/global-setup.ts), so every workflow test runs the shared copies.
 */
import type { BundleOptions } from '@temporalio/worker';

export function workflowBundleOptions(): Pick<BundleOptions, 'workflowsPath' | 'preloadModules'> {
  return {
    workflowsPath: require.resolve('../workflows'),
    preloadModules: ['zod', require.resolve('../common/message-schemas')],
  };
}
