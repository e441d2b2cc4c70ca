/*
 * What the install scripts share: whether a file is an executable, and `pip install --target` of a
 * pinned requirement into a folder of .tools/ (the Temporal CLI, its test server, schemathesis).
 * Plain Node (no dependencies): it runs before `npm ci` has finished in some set-ups.
 */
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');

function executableFile(candidate) {
  try {
    if (!fs.statSync(candidate).isFile()) return false;
    fs.accessSync(candidate, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * `python3 -m pip install --target <dir> <requirement>` ($PYTHON overrides python3). Returns `{ok}` or
 * `{ok: false, why}` with pip's last lines; never throws for pip's failure. `deps: true` installs the
 * requirement's dependencies too; `inherit: true` shows pip's output as it comes.
 */
function pipInstallTarget(requirement, dir, o = {}) {
  const python = process.env.PYTHON || 'python3';
  const args = [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--disable-pip-version-check',
    '--no-warn-script-location',
  ];
  if (!o.deps) args.push('--no-deps');
  const res = spawnSync(python, [...args, '--target', dir, requirement], {
    encoding: 'utf8',
    stdio: o.inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'],
  });
  if (!res.error && res.status === 0) return { ok: true };
  const out = `${res.stdout || ''}${res.stderr || ''}`.trim().split('\n').slice(-15).join('\n');
  return {
    ok: false,
    why: `${python} -m pip install ${requirement} failed: ${res.error?.message ?? (out || `exit ${res.status}`)}`,
  };
}

module.exports = { executableFile, pipInstallTarget };
