/**
 * The builds of `paysaga dev`. Its worker makes its own build current (PAYSAGA_PROMOTE=always), and every
 * workflow is pinned to the build that started it: after a change to the workflow code, sessions begun
 * before it resume only on a worker of their own build. So the dev stack keeps each build's bundle in
 * `<data>/builds/<build id>.js` and, at start, runs a worker of every older build that still has open
 * workflows until they end; an older build whose bundle it does not have is named with what to do.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { deploymentStatus, type BuildStatus, type WorkerVersion } from '../../workers/versioning';

export const BUILDS_DIR = 'builds';

/** Keeps the bundle of the build just started, for a later start that must drain it. */
export function keepBundle(dataDir: string, version: WorkerVersion, bundlePath: string): string {
  const dir = path.join(dataDir, BUILDS_DIR);
  fs.mkdirSync(dir, { recursive: true });
  const kept = path.join(dir, `${version.buildId}.js`);
  if (!fs.existsSync(kept)) fs.copyFileSync(bundlePath, kept);
  return kept;
}

export interface OlderBuild extends BuildStatus {
  /** The kept bundle of that build, when this data folder has it. */
  bundlePath?: string;
}

/** Builds other than `current` that still run workflows, each with its kept bundle when there is one. */
export async function olderBuildsWithWork(
  client: Client,
  dataDir: string,
  current: WorkerVersion,
): Promise<OlderBuild[]> {
  const builds = await deploymentStatus(client, current.deploymentName);
  return builds
    .filter((b) => b.buildId !== current.buildId && b.open > 0)
    .map((b) => {
      const kept = path.join(dataDir, BUILDS_DIR, `${b.buildId}.js`);
      return fs.existsSync(kept) ? { ...b, bundlePath: kept } : b;
    });
}

/** What the banner says of an older build with open workflows. */
export function describeOlderBuild(b: OlderBuild, deploymentName: string): string[] {
  if (b.bundlePath)
    return [
      `  Build ${b.buildId}  ${b.open} open, pinned to it: a worker of that build runs them to their end`,
    ];
  return [
    `  Build ${b.buildId}  ${b.open} open, pinned to it, and this data folder lacks its code: they wait.`,
    '    Finish them with that code (check out its commit and run paysaga dev), or end them:',
    `    temporal workflow terminate --query 'TemporalWorkerDeploymentVersion="${deploymentName}:${b.buildId}" AND ExecutionStatus="Running"' --reason 'old build'`,
  ];
}
