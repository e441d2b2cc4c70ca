#!/usr/bin/env node
// Reads a V8 CPU profile (`node --cpu-prof`, or BENCH_CHILD_CPU_PROF for `bench dev`'s dev process) and
// prints where one thread's time went:
//
//   node bench/profile-summary.js owners <file.cpuprofile> [top] [fromSeconds] [toSeconds]
//     busy time by the nearest paysaga source file on each sample's stack (api/, sandbox/, store/, ...),
//     else by the package or native function that was running: "which part of paysaga asked for it";
//     only the samples between the two offsets from the profile's start when given (one benchmark row);
//   node bench/profile-summary.js stretches <file.cpuprofile> [lastSeconds] [minMs]
//     the longest busy stretches (no idle sample in between) of the profile's last seconds, each with what
//     ran most in it: what held the event loop up, e.g. while `bench dev` measured its reads.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');

function load(file) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  let t = profile.startTime;
  const times = profile.timeDeltas.map((d) => (t += d));
  return { profile, nodes, parent, times };
}

const isIdle = (node) => node.callFrame.functionName === '(idle)';

/** The paysaga file a frame belongs to (`store/sessions.ts`; compiled `dist/` files as their source). */
function paysagaFile(url) {
  if (!url || url.includes('node_modules')) return undefined;
  const file = url.replace(/^file:\/\//, '');
  if (!file.startsWith(ROOT + path.sep)) return undefined;
  return path.relative(ROOT, file).replace(/^dist\//, '');
}

/** What a frame is when no paysaga file is on its stack: its package, or the native function. */
function outside(node) {
  const { url, functionName } = node.callFrame;
  const pkg = url && /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url) return path.basename(url);
  return functionName.startsWith('(') ? functionName : `(${functionName || 'native'})`;
}

function ownerOf(id, p, memo) {
  if (memo.has(id)) return memo.get(id);
  const node = p.nodes.get(id);
  const own = paysagaFile(node.callFrame.url);
  const up = p.parent.get(id);
  const found = own ?? (up === undefined ? undefined : ownerOf(up, p, memo));
  memo.set(id, found);
  return found;
}

function owners(file, top = 30, fromSeconds = 0, toSeconds = Infinity) {
  const p = load(file);
  const from = p.profile.startTime + Number(fromSeconds) * 1e6;
  const to = p.profile.startTime + Number(toSeconds) * 1e6;
  const memo = new Map();
  const spent = new Map();
  let total = 0;
  let busy = 0;
  p.profile.samples.forEach((id, i) => {
    if (p.times[i] < from || p.times[i] > to) return;
    const dt = p.profile.timeDeltas[i] ?? 0;
    total += dt;
    const node = p.nodes.get(id);
    if (isIdle(node)) return;
    busy += dt;
    const key = ownerOf(id, p, memo) ?? `other: ${outside(node)}`;
    spent.set(key, (spent.get(key) ?? 0) + dt);
  });
  console.log(`${file}: busy ${(busy / 1e6).toFixed(1)} s of ${(total / 1e6).toFixed(1)} s`);
  for (const [key, us] of [...spent].sort((a, b) => b[1] - a[1]).slice(0, Number(top)))
    console.log(`${(us / 1000).toFixed(0).padStart(8)} ms  ${key}`);
}

function stretches(file, lastSeconds = 30, minMs = 8) {
  const p = load(file);
  const memo = new Map();
  const from = p.times.at(-1) - Number(lastSeconds) * 1e6;
  const runs = [];
  let run = [];
  p.profile.samples.forEach((id, i) => {
    if (p.times[i] < from) return;
    if (isIdle(p.nodes.get(id))) {
      if (run.length) runs.push(run);
      run = [];
    } else run.push(i);
  });
  if (run.length) runs.push(run);
  const spanMs = (r) => (p.times[r.at(-1)] - p.times[r[0]]) / 1000;
  const busyMs = runs.reduce((sum, r) => sum + spanMs(r), 0);
  const long = runs.filter((r) => spanMs(r) >= Number(minMs)).sort((a, b) => spanMs(b) - spanMs(a));
  console.log(
    `${file}: last ${lastSeconds} s, busy ${busyMs.toFixed(0)} ms, ${long.length} stretches of ${minMs} ms or more`,
  );
  for (const r of long.slice(0, 15)) {
    const what = new Map();
    for (const i of r) {
      const id = p.profile.samples[i];
      const key = ownerOf(id, p, memo) ?? outside(p.nodes.get(id));
      what.set(key, (what.get(key) ?? 0) + 1);
    }
    const most = [...what].sort((a, b) => b[1] - a[1]).slice(0, 4);
    console.log(`${spanMs(r).toFixed(1).padStart(8)} ms  ${most.map(([k, n]) => `${k} (${n})`).join(', ')}`);
  }
}

const [mode, file, ...rest] = process.argv.slice(2);
if (mode === 'owners' && file) owners(file, ...rest);
else if (mode === 'stretches' && file) stretches(file, ...rest);
else {
  console.error('usage: node bench/profile-summary.js owners|stretches <file.cpuprofile> [...]');
  process.exit(2);
}
