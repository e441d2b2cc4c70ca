#!/usr/bin/env node
/*
 * The cluster test's last resort, a detached process of its own: `node reaper.js <test pid> <state file>`.
 * Should the test process die without its teardown (SIGKILL, a CI timeout, jest giving up), this kills
 * what the state file lists, each pid only while its command line still shows what was started there (a
 * reused pid is left alone), then removes the listed folders. It exits when the test process is gone, or
 * when the state file is (the teardown ran).
 *
 * State file: { "kill": [{ "pid": 1, "signal": "SIGKILL", "cmd": "temporal-server" }], "remove": ["/tmp/x"] }
 * (Plain Node: jest's test environment cannot hook the real process's exit or signals.)
 */
'use strict';

const fs = require('node:fs');

const [parentPid, stateFile] = [Number(process.argv[2]), process.argv[3]];

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function commandLine(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return undefined; // no /proc: trust the pid
  }
}

function reap() {
  let state;
  try {
    state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
  } catch {
    return; // the teardown ran
  }
  for (const { pid, signal, cmd } of state.kill || []) {
    const line = commandLine(pid);
    if (line !== undefined && !line.includes(cmd)) continue;
    try {
      process.kill(pid, signal);
    } catch {
      // gone already
    }
  }
  // Give the processes a moment to let go of their files (PostgreSQL's immediate shutdown).
  setTimeout(() => {
    for (const dir of state.remove || []) fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(stateFile, { force: true });
    process.exit(0);
  }, 3_000);
}

const timer = setInterval(() => {
  if (!fs.existsSync(stateFile)) process.exit(0);
  if (!alive(parentPid)) {
    clearInterval(timer);
    reap();
  }
}, 500);
