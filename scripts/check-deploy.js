#!/usr/bin/env node
/*
 * Checks the deployment files against the code, without a Docker engine (CI runs it; `.ci/run`):
 *
 *  1. docker-compose.yml: every environment variable set for a paysaga service (image paysaga or built
 *     from this folder) is one paysaga reads. Read means: `env.NAME` / `env['NAME']` or a quoted
 *     'PAYSAGA_...' / 'TEMPORAL_...' name handed to a reader, in the code the image is built from, or a
 *     variable of Temporal's standard client configuration, which @temporalio/envconfig reads for us.
 *     A misspelt or retired variable would otherwise be ignored in silence.
 *  2. Dockerfile: it copies every source folder of tsconfig.build.json, and .dockerignore keeps none
 *     of them out (a new folder would otherwise be missing from the image).
 *
 *   node scripts/check-deploy.js            exit 0, or 1 with one line per problem
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const ROOT = path.resolve(__dirname, '..');

/** Read by node itself, not by paysaga's code. */
const NODE_VARIABLES = ['NODE_ENV', 'NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS', 'TZ'];

function sourceDirs(root) {
  const config = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8'));
  return config.include || [];
}

function walk(dir, out = []) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) walk(full, out);
    else if (/\.(ts|js)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

const READS = [
  /\benv\.([A-Z][A-Z0-9_]*)\b/g,
  /\benv\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\]/g,
  /['"]((?:PAYSAGA|TEMPORAL)_[A-Z0-9_]+)['"]/g,
];

/** Names the code the image is built from reads. */
function variablesReadBySources(root) {
  const files = [...sourceDirs(root), 'bin'].flatMap((dir) => walk(path.join(root, dir)));
  const names = new Set();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    for (const re of READS) for (const m of text.matchAll(re)) names.add(m[1]);
  }
  return names;
}

/** What @temporalio/envconfig reads: exact names and the gRPC header prefix. */
function variablesReadByEnvconfig(root) {
  const lib = require.resolve('@temporalio/envconfig/lib/envconfig-toml.js', { paths: [root] });
  const text = fs.readFileSync(lib, 'utf8');
  const names = new Set([...text.matchAll(/envProvider\[['"]([A-Z][A-Z0-9_]*)['"]\]/g)].map((m) => m[1]));
  const prefixes = [...text.matchAll(/PREFIX\s*=\s*['"]([A-Z0-9_]+)['"]/g)].map((m) => m[1]);
  if (names.size === 0) throw new Error(`found no variables in ${lib}: has @temporalio/envconfig changed?`);
  return { names, prefixes };
}

function isPaysagaService(service) {
  const image = String(service.image || '');
  const context = typeof service.build === 'string' ? service.build : service.build && service.build.context;
  return /paysaga/i.test(image) || context === '.' || context === './';
}

function environmentKeys(service) {
  const env = service.environment;
  if (!env) return [];
  if (Array.isArray(env)) return env.map((item) => String(item).split('=')[0]);
  return Object.keys(env);
}

/** Problems of the compose file (strings), and what was checked. */
function checkComposeEnv(root, composeText) {
  const doc = YAML.parse(composeText, { merge: true, maxAliasCount: -1 });
  const fromSources = variablesReadBySources(root);
  const envconfig = variablesReadByEnvconfig(root);
  const known = (name) =>
    fromSources.has(name) ||
    envconfig.names.has(name) ||
    envconfig.prefixes.some((p) => name.startsWith(p)) ||
    NODE_VARIABLES.includes(name);
  const problems = [];
  let services = 0;
  let variables = 0;
  for (const [name, service] of Object.entries((doc && doc.services) || {})) {
    if (!service || !isPaysagaService(service)) continue;
    services++;
    for (const key of environmentKeys(service)) {
      variables++;
      if (!known(key))
        problems.push(`docker-compose.yml: service ${name} sets ${key}, which paysaga does not read`);
    }
  }
  if (services === 0) problems.push('docker-compose.yml: no paysaga service found');
  return { problems, services, variables };
}

/** Source folders the Dockerfile does not copy, or .dockerignore excludes. */
function checkDockerfile(root) {
  const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  const ignore = fs
    .readFileSync(path.join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const copied = new Set(
    [...dockerfile.matchAll(/^COPY\s+(?!--from)(.+)$/gm)].flatMap((m) =>
      m[1]
        .trim()
        .split(/\s+/)
        .slice(0, -1)
        .map((p) => p.replace(/^\.\//, '').replace(/\/$/, '')),
    ),
  );
  const problems = [];
  for (const dir of [
    ...sourceDirs(root),
    'bin',
    'package.json',
    'package-lock.json',
    'tsconfig.build.json',
  ]) {
    if (!copied.has(dir)) problems.push(`Dockerfile: ${dir} is not copied into the build stage`);
    if (ignore.includes(dir) || ignore.includes(`${dir}/`))
      problems.push(`.dockerignore: excludes ${dir}, which the image is built from`);
  }
  return problems;
}

function main() {
  const compose = checkComposeEnv(ROOT, fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'));
  const problems = [...compose.problems, ...checkDockerfile(ROOT)];
  for (const p of problems) console.log(p);
  console.log(
    problems.length
      ? `check-deploy: ${problems.length} problem(s)`
      : `check-deploy: ok (${compose.variables} variables of ${compose.services} paysaga services; ` +
          'Dockerfile copies every source folder)',
  );
  process.exitCode = problems.length ? 1 : 0;
}

module.exports = { checkComposeEnv, checkDockerfile };

if (require.main === module) main();
