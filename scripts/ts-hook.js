// On-the-fly compilation of TypeScript by @swc/core (a development dependency: only a checkout runs
// TypeScript), for bench/run.js, the paysaga processes the benchmarks start from source
// (bench/lib/probe.js), the Python client's scenario runner, and the embedded store's thread when
// paysaga runs from source (store/embedded.ts).
'use strict';
const fs = require('node:fs');
const Module = require('node:module');
const swc = require('@swc/core');

if (!Module._extensions['.ts']) {
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
}
