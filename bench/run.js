#!/usr/bin/env node
// Runs a TypeScript benchmark from bench/ with on-the-fly compilation by @swc/core (already a dependency).
'use strict';
const path = require('node:path');
require('../scripts/ts-hook');

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
