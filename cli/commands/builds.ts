/**
 * `paysaga builds`: the builds of the worker deployment (workers/versioning.ts) and the release routine
 * of docs/operations.md ("Releasing a new build"):
 *
 *   paysaga builds                     which build is current, ramping, draining or drained, and how many
 *                                      workflows each still runs
 *   paysaga builds current <build id>  new work goes to this build (its workers must be polling)
 *   paysaga builds ramp <build id> <percent>   a share of new work goes to it, the rest to the current one
 *
 * Temporal is found as every command finds it (TEMPORAL_ADDRESS, ... or a profile), or, with none set,
 * the running `paysaga dev` of the data folder.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { Client } from '@temporalio/client';
import { temporalSettingsFromEnv, envForLocalTemporal } from '../../platform/temporal-config';
import { connectTemporalClient } from '../../platform/temporal-connection';
import {
  DEFAULT_DEPLOYMENT,
  deploymentStatus,
  makeCurrent,
  rampTo,
  type BuildStatus,
} from '../../workers/versioning';
import { processAlive, readDevState, resolveDataDir } from '../dev/data-dir';
import { clientInterceptors } from '../../client/ask-again';

export interface BuildsCommandDeps {
  out: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

const processDeps: BuildsCommandDeps = {
  out: (line) => process.stdout.write(`${line}\n`),
  env: process.env,
};

interface BuildsOptions {
  deployment?: string;
  data?: string;
  json?: boolean;
}

export function register(program: Command, deps: BuildsCommandDeps = processDeps): void {
  const builds = program
    .command('builds')
    .description(
      'the builds of the worker deployment: which is current, ramping or draining, and how many workflows each runs',
    )
    .option(
      '--deployment <name>',
      `the worker deployment (default PAYSAGA_DEPLOYMENT or ${DEFAULT_DEPLOYMENT})`,
    )
    .option(
      '--data <dir>',
      'data folder of a running `paysaga dev` (used when no TEMPORAL_* variable is set)',
    )
    .option('--json', 'print the builds as JSON')
    .action(async (opts: BuildsOptions) => {
      await withClient(opts, deps.env, async (client, name) => {
        const list = await deploymentStatus(client, name);
        if (opts.json) deps.out(JSON.stringify(list));
        else for (const line of formatBuilds(name, list)) deps.out(line);
      });
    });
  builds
    .command('current <buildId>')
    .description('make a build current: new sessions start on it (pinned ones stay on their build)')
    .action(async (buildId: string, _o: unknown, cmd: Command) => {
      const opts = cmd.parent!.opts<BuildsOptions>();
      await withClient(opts, deps.env, async (client, deploymentName) => {
        await makeCurrent(client, { deploymentName, buildId }, 10_000);
        deps.out(`build ${buildId} of ${deploymentName} is current`);
      });
    });
  builds
    .command('ramp <buildId> <percent>')
    .description('send a share of new work to a build (0-100), the rest to the current one')
    .action(async (buildId: string, percent: string, _o: unknown, cmd: Command) => {
      const share = Number(percent);
      if (!Number.isFinite(share) || share < 0 || share > 100)
        throw new InvalidArgumentError('percent: a number from 0 to 100');
      const opts = cmd.parent!.opts<BuildsOptions>();
      await withClient(opts, deps.env, async (client, deploymentName) => {
        await rampTo(client, { deploymentName, buildId }, share);
        deps.out(`build ${buildId} of ${deploymentName} takes ${share}% of new work`);
      });
    });
}

/** One line per build, newest first. */
export function formatBuilds(deployment: string, builds: BuildStatus[]): string[] {
  if (builds.length === 0) return [`deployment ${deployment}: no build has polled yet`];
  return [
    `deployment ${deployment}`,
    ...builds.map(
      (b) =>
        `  ${b.buildId.padEnd(14)} ${`${b.status}${b.rampPercent !== undefined ? ` ${b.rampPercent}%` : ''}`.padEnd(
          12,
        )} ${String(b.open).padStart(6)} open   ${b.createdAt ?? ''}`,
    ),
  ];
}

async function withClient(
  opts: BuildsOptions,
  env: NodeJS.ProcessEnv,
  work: (client: Client, deploymentName: string) => Promise<void>,
): Promise<void> {
  const dev = readDevState(resolveDataDir(opts.data, env));
  const configured = Object.keys(env).some((k) => k.startsWith('TEMPORAL_'));
  const source =
    !configured && dev && processAlive(dev.pid)
      ? envForLocalTemporal(env, dev.temporalAddress, dev.namespace)
      : env;
  const settings = temporalSettingsFromEnv(source);
  const connection = await connectTemporalClient(settings);
  try {
    const name = opts.deployment || env.PAYSAGA_DEPLOYMENT || DEFAULT_DEPLOYMENT;
    await work(
      new Client({ connection, namespace: settings.namespace, interceptors: clientInterceptors() }),
      name,
    );
  } finally {
    await connection.close();
  }
}
