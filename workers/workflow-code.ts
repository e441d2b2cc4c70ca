/**
 * Which workflow code a worker loads: `PAYSAGA_WORKFLOW_BUNDLE` (a file written by bundleWorkflowCode),
 * else the prebuilt `dist/workflow-bundle.js` (`npm run build`) when it is newer than the compiled
 * workflows, else the workflows are bundled at start (a few seconds) and, when running from dist/, the
 * bundle is saved there for the next start. Always a file: its hash is the worker's build id.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { Logger as PinoLogger } from 'pino';
import { temporalLogger } from './logging';
import { workflowBundleOptions } from './workflow-bundle-options';

/** Files the prebuilt bundle is made from (compiled workflows and common/, which they import). */
function bundleInputs(distDir: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.name.endsWith('.js')) files.push(full);
    }
  };
  // common/ is the bottom module workflow code imports (snapshot reading, messages, kinds, ...)
  walk(path.join(distDir, 'workflows'));
  walk(path.join(distDir, 'common'));
  return files;
}

/** True when `bundle` exists and no input it was built from is newer. */
export function bundleIsFresh(bundle: string, distDir: string): boolean {
  let built: number;
  try {
    built = fs.statSync(bundle).mtimeMs;
  } catch {
    return false;
  }
  for (const input of bundleInputs(distDir)) {
    try {
      if (fs.statSync(input).mtimeMs > built) return false;
    } catch {
      // an input that no longer exists: the bundle may hold stale code
      return false;
    }
  }
  return true;
}

/** Where the prebuilt bundle lives when this module runs compiled (dist/workers/workflow-code.js). */
export function prebuiltBundlePath(): string | undefined {
  return __filename.endsWith('.js') ? path.resolve(__dirname, '..', 'workflow-bundle.js') : undefined;
}

export interface WorkflowCode {
  /** The bundle file the worker runs (its hash is the worker's build id: workers/versioning.ts). */
  bundlePath: string;
  source: 'env' | 'prebuilt' | 'bundled';
}

/** Decides which workflow code the worker loads (see the file comment). */
export async function resolveWorkflowCode(env: NodeJS.ProcessEnv, logger: PinoLogger): Promise<WorkflowCode> {
  const fromEnv = env.PAYSAGA_WORKFLOW_BUNDLE;
  if (fromEnv) {
    if (!fs.existsSync(fromEnv))
      throw new Error(`PAYSAGA_WORKFLOW_BUNDLE is set to ${fromEnv}, but no file is there`);
    return { bundlePath: path.resolve(fromEnv), source: 'env' };
  }
  const prebuilt = prebuiltBundlePath();
  if (prebuilt && bundleIsFresh(prebuilt, path.dirname(prebuilt)))
    return { bundlePath: prebuilt, source: 'prebuilt' };

  const started = Date.now();
  logger.info('bundling workflows (no fresh dist/workflow-bundle.js; `npm run build` makes one)');
  const { code } = await bundleWorkflowCode({
    ...workflowBundleOptions(),
    logger: temporalLogger(logger.child({ component: 'bundler' }, { level: 'warn' })),
  });
  // Written next to the inputs for the next start (running from source: to a temp folder); a temp name
  // first so a reader never sees half a file.
  const target =
    prebuilt ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-')), 'workflow-bundle.js');
  const tmp = `${target}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, code);
  fs.renameSync(tmp, target);
  logger.info({ ms: Date.now() - started, bundle: target }, 'workflows bundled');
  return { bundlePath: target, source: 'bundled' };
}
