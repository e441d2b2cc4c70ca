/**
 * The `paysaga` command. Each subcommand lives in cli/commands/<name>.ts and exports
 * `register(program: Command)`; add it to COMMANDS below.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import type { OutputConfiguration } from 'commander';
import * as apiCommand from './commands/api';
import * as buildsCommand from './commands/builds';
import * as demoCommand from './commands/demo';
import * as devCommand from './commands/dev';
import * as eventsCommand from './commands/events';
import * as exportCommand from './commands/export';
import * as keysCommand from './commands/keys';
import * as sandboxCommand from './commands/sandbox';
import * as setupCommand from './commands/setup';
import * as tokenCommand from './commands/token';
import * as webhooksCommand from './commands/webhooks';
import * as workerCommand from './commands/worker';
import { findProjectRoot } from './temporal-cli';

interface CommandModule {
  register(program: Command): void;
}

const COMMANDS: CommandModule[] = [
  apiCommand,
  keysCommand,
  sandboxCommand,
  devCommand,
  workerCommand,
  buildsCommand,
  setupCommand,
  demoCommand,
  eventsCommand,
  exportCommand,
  webhooksCommand,
  tokenCommand,
];

function packageVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(findProjectRoot(), 'package.json'), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export interface BuildProgramOptions {
  /** Throw instead of calling process.exit on usage errors, --help and --version (for tests). */
  exitOverride?: boolean;
  output?: OutputConfiguration;
}

export function buildProgram(options: BuildProgramOptions = {}): Command {
  const program = new Command('paysaga')
    .description('partner side of the Payment Session Service on Temporal')
    .version(packageVersion())
    .showHelpAfterError();
  // Settings made before subcommands are added are inherited by them.
  if (options.exitOverride) program.exitOverride();
  if (options.output) program.configureOutput(options.output);
  for (const command of COMMANDS) command.register(program);
  return program;
}

/** Run the CLI; errors thrown by commands are printed as `paysaga: <message>` with exit code 1. */
export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    console.error(`paysaga: ${err instanceof Error ? err.message : String(err)}`);
    if (process.env.PAYSAGA_DEBUG && err instanceof Error && err.stack) console.error(err.stack);
    process.exitCode = 1;
  }
}

if (require.main === module) {
  void main();
}
