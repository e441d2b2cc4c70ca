/**
 * Worker Deployment Versioning (docs/decisions/019-every-worker-is-versioned.md). Every worker belongs to
 * the deployment `PAYSAGA_DEPLOYMENT` (default `paysaga`) with a build id that changes whenever the
 * workflow code does: the SHA-256 of the workflow bundle it runs (`PAYSAGA_BUILD_ID` overrides it). Every
 * workflow is pinned to the build that started it, so a session finishes on the code it began with;
 * subscriptions and the reconciler move to a new build only when they continue as new between periods
 * or passes (workflows/history.ts). Which build Temporal gives new work to is the deployment's current
 * (or ramping) version: `PAYSAGA_PROMOTE` says whether a starting worker makes its own build current.
 */
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import type { Logger as PinoLogger } from 'pino';

export const DEFAULT_DEPLOYMENT = 'paysaga';

export interface WorkerVersion {
  deploymentName: string;
  buildId: string;
}

/**
 * Whether a starting worker makes its build the current one: `if-none` (the default) only when the
 * deployment has no current build yet (a first deployment); `always` (paysaga dev: one build at a
 * time); `never` (a release made current by hand or by the deploy pipeline: docs/operations.md).
 */
export type Promotion = 'if-none' | 'always' | 'never';
const PROMOTIONS: readonly Promotion[] = ['if-none', 'always', 'never'];

/** A build id for this workflow code: the first 12 hex digits of its bundle's SHA-256. */
export function buildIdOf(bundleCode: string | Buffer): string {
  return createHash('sha256').update(bundleCode).digest('hex').slice(0, 12);
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/** The worker's version: PAYSAGA_DEPLOYMENT and PAYSAGA_BUILD_ID, else the bundle's own build id. */
export function workerVersionFromEnv(env: NodeJS.ProcessEnv, bundleCode: string | Buffer): WorkerVersion {
  const deploymentName = env.PAYSAGA_DEPLOYMENT?.trim() || DEFAULT_DEPLOYMENT;
  if (!NAME.test(deploymentName))
    throw new Error(
      `PAYSAGA_DEPLOYMENT must be 1-63 letters, digits, - or _ (starting with a letter or digit), got ${deploymentName}`,
    );
  const buildId = env.PAYSAGA_BUILD_ID?.trim() || buildIdOf(bundleCode);
  if (!NAME.test(buildId))
    throw new Error(
      `PAYSAGA_BUILD_ID must be 1-63 letters, digits, - or _ (starting with a letter or digit), got ${buildId}`,
    );
  return { deploymentName, buildId };
}

export function promotionFromEnv(env: NodeJS.ProcessEnv): Promotion {
  const raw = env.PAYSAGA_PROMOTE?.trim() || 'if-none';
  if (!PROMOTIONS.includes(raw as Promotion))
    throw new Error(`PAYSAGA_PROMOTE must be one of ${PROMOTIONS.join(', ')}, got ${raw}`);
  return raw as Promotion;
}

/** The SDK's options for a versioned worker: every workflow pinned unless it says otherwise. */
export function deploymentOptions(version: WorkerVersion): WorkerDeploymentOptions {
  return { version, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' };
}

/** `deployment:build`, as Temporal's search attribute TemporalWorkerDeploymentVersion holds it. */
export const versionKey = (v: WorkerVersion): string => `${v.deploymentName}:${v.buildId}`;

/** The build Temporal gives new work to, or undefined when the deployment has none (or does not exist). */
export async function currentBuild(client: Client, deploymentName: string): Promise<string | undefined> {
  try {
    const d = await client.workflowService.describeWorkerDeployment({
      namespace: client.options.namespace,
      deploymentName,
    });
    return d.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId || undefined;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Makes `version` the deployment's current build. Temporal knows a version only once one of its workers
 * has polled, and refuses it as current until its workers poll every task queue the current build's do,
 * so this tries again for up to `withinMs`.
 */
export async function makeCurrent(client: Client, version: WorkerVersion, withinMs = 30_000): Promise<void> {
  const until = Date.now() + withinMs;
  for (let pause = 100; ; pause = Math.min(pause * 2, 1_000)) {
    try {
      await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: client.options.namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        identity: 'paysaga',
      });
      return;
    } catch (err) {
      if (!(isNotFound(err) || isStillStarting(err)) || Date.now() + pause > until) throw err;
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}

/** Ramps `percent` of new work to `version` (the rest goes on to the current build). */
export async function rampTo(client: Client, version: WorkerVersion, percent: number): Promise<void> {
  await client.workflowService.setWorkerDeploymentRampingVersion({
    namespace: client.options.namespace,
    deploymentName: version.deploymentName,
    buildId: version.buildId,
    percentage: percent,
    identity: 'paysaga',
  });
}

/** Applies the promotion policy once this worker polls; says what it did. */
export async function promote(
  client: Client,
  version: WorkerVersion,
  how: Promotion,
  logger?: PinoLogger,
): Promise<'made current' | 'already current' | 'left as is'> {
  if (how === 'never') return 'left as is';
  const current = await currentBuild(client, version.deploymentName);
  if (current === version.buildId) return 'already current';
  if (how === 'if-none' && current !== undefined) {
    logger?.info(
      { deployment: version.deploymentName, buildId: version.buildId, current },
      'another build is current: this worker takes new work once its build is made current (docs/operations.md, Releasing)',
    );
    return 'left as is';
  }
  await makeCurrent(client, version);
  logger?.info({ deployment: version.deploymentName, buildId: version.buildId }, 'build made current');
  return 'made current';
}

/** One build of the deployment as an operator sees it. */
export interface BuildStatus {
  buildId: string;
  /** current, ramping (with its percentage), draining (pinned work still open), drained, inactive. */
  status: string;
  rampPercent?: number;
  /** Workflows of this build still open (sessions, subscriptions, the reconciler). */
  open: number;
  createdAt?: string;
}

const STATUS: Record<number, string> = {
  1: 'inactive',
  2: 'current',
  3: 'ramping',
  4: 'draining',
  5: 'drained',
};

/** Every build of the deployment, newest first, with how many workflows each still runs. */
export async function deploymentStatus(client: Client, deploymentName: string): Promise<BuildStatus[]> {
  let info;
  try {
    info = (
      await client.workflowService.describeWorkerDeployment({
        namespace: client.options.namespace,
        deploymentName,
      })
    ).workerDeploymentInfo;
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
  const ramp = info?.routingConfig?.rampingVersionPercentage ?? 0;
  const builds: BuildStatus[] = [];
  for (const v of info?.versionSummaries ?? []) {
    const buildId = v.deploymentVersion?.buildId ?? '';
    const { count } = await client.workflowService.countWorkflowExecutions({
      namespace: client.options.namespace,
      query: `TemporalWorkerDeploymentVersion="${versionKey({ deploymentName, buildId })}" AND ExecutionStatus="Running"`,
    });
    const status = STATUS[Number(v.status)] ?? 'unknown';
    const seconds = Number(v.createTime?.seconds ?? 0);
    builds.push({
      buildId,
      status,
      ...(status === 'ramping' ? { rampPercent: ramp } : {}),
      open: Number(count ?? 0),
      ...(seconds ? { createdAt: new Date(seconds * 1000).toISOString() } : {}),
    });
  }
  return builds.sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? ''));
}

/**
 * gRPC status 9 (FAILED_PRECONDITION): the server refuses a current build whose workers do not poll yet
 * every task queue the current build's do, as while they start; one that never will stays refused once
 * `withinMs` has passed, with the server's words.
 */
function isStillStarting(err: unknown): boolean {
  return (err as { code?: number } | undefined)?.code === 9;
}

function isNotFound(err: unknown): boolean {
  // gRPC status 5 (NOT_FOUND): no such deployment, or a version no worker of has polled yet.
  return (err as { code?: number } | undefined)?.code === 5;
}
