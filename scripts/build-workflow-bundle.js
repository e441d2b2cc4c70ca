#!/usr/bin/env node
/*
 * `npm run build`, second step (after tsc): bundle the compiled workflows (dist/workflows/index.js) with
 * the Temporal SDK's bundleWorkflowCode into dist/workflow-bundle.js, which workers load at start instead
 * of bundling (workers/workflow-code.ts; it ignores a bundle older than dist/workflows).
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { bundleWorkflowCode, DefaultLogger } = require('@temporalio/worker');

const root = path.resolve(__dirname, '..');
const workflowsPath = path.join(root, 'dist', 'workflows', 'index.js');
const out = path.join(root, 'dist', 'workflow-bundle.js');

async function main() {
  if (!fs.existsSync(workflowsPath)) {
    console.error(`build-workflow-bundle: ${path.relative(root, workflowsPath)} is missing: run tsc first`);
    process.exit(1);
  }
  const started = Date.now();
  const { workflowBundleOptions } = require(path.join(root, 'dist', 'workers', 'workflow-bundle-options.js'));
  const { code } = await bundleWorkflowCode({
    ...workflowBundleOptions(),
    workflowsPath,
    logger: new DefaultLogger('WARN'),
  });
  const tmp = `${out}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, code);
  fs.renameSync(tmp, out);
  console.log(
    `build-workflow-bundle: wrote ${path.relative(root, out)} (${Math.round(code.length / 1024)} KiB) ` +
      `in ${Date.now() - started} ms`,
  );
}

main().catch((err) => {
  console.error('build-workflow-bundle: failed:', err);
  process.exit(1);
});
