#!/usr/bin/env node
// Runs a TypeScript benchmark from bench/ with on-the-fly compilation by @swc/core (already a dependency).
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const swc = require('@swc/core');
const Module = require('node:module');

Module._extensions['.ts'] = function compileTs(module, filename) {
  const src = fs.readFileSync(filename, 'utf8');
  const out = swc.transformSync(src, {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(out.code, filename);
};
const name = process.argv[2];
if (!name) {
  console.error('usage: npm run bench -- <name>   (runs bench/<name>.bench.ts)');
  process.exit(2);
}
const mod = require(path.resolve(__dirname, `${name}.bench.ts`));
Promise.resolve(mod.main()).catch((err) => {
  console.error(err);
  process.exit(1);
});
