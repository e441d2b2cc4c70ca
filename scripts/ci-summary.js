#!/usr/bin/env node
/*
 * Prints the closing line of a CI run, `N passed, N failed[, N skipped]`, from jest's JSON reports
 * (jest --json --outputFile=...) plus the outcome of the other CI steps, and exits non-zero if anything
 * failed.
 *
 *   node scripts/ci-summary.js --report test-results/jest.json --jest-exit 0 \
 *     --report test-results/jest-cluster.json --jest-exit 0 --step typecheck=0 --step lint=1
 *
 * Several jest runs: one `--report` each, its `--jest-exit` right after it; their counts add up.
 *
 * Counting: every jest test counts by its status; a test file that failed to run at all (syntax error,
 * throwing import, failing hook) counts as one failure; each failed step (typecheck, lint, ...) counts as
 * one failure; a missing/unreadable report, a non-zero jest exit with nothing failed in its report, and a
 * run with no tests at all count as one failure each. The last line printed is always the summary.
 */
'use strict';

const fs = require('node:fs');

function parseArgs(argv) {
  const args = { reports: [], steps: [] };
  const last = () => {
    if (args.reports.length === 0) args.reports.push({ report: 'test-results/jest.json' });
    return args.reports[args.reports.length - 1];
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (arg === '--report') args.reports.push({ report: value });
    else if (arg === '--jest-exit') last().jestExit = Number(value);
    else if (arg === '--step') {
      const eq = value.lastIndexOf('=');
      args.steps.push({ name: value.slice(0, eq), code: Number(value.slice(eq + 1)) });
    } else throw new Error(`unknown argument ${arg}`);
    i++;
  }
  if (args.reports.length === 0) last();
  return args;
}

/** `reports`: `[{ report, jestExit }]`; the single-report form `{ report, jestExit, steps }` still works. */
function summarize({ reports, report, jestExit, steps = [] }) {
  const problems = [];
  let passed = 0;
  let failed = 0;
  let skipped = 0;

  for (const step of steps) {
    if (step.code !== 0) {
      failed++;
      problems.push(`${step.name} failed (exit ${step.code})`);
    }
  }

  for (const r of reports ?? [{ report, jestExit }]) {
    const counted = countReport(r.report, r.jestExit);
    passed += counted.passed;
    failed += counted.failed;
    skipped += counted.skipped;
    problems.push(...counted.problems);
  }

  return { passed, failed, skipped, problems };
}

function countReport(report, jestExit) {
  const problems = [];
  let passed = 0;
  let failed = 0;
  let skipped = 0;

  let json;
  try {
    json = JSON.parse(fs.readFileSync(report, 'utf8'));
  } catch (err) {
    failed++;
    problems.push(`no readable jest report at ${report} (${err.code || err.message}): jest did not complete`);
  }

  if (json) {
    passed += json.numPassedTests || 0;
    failed += json.numFailedTests || 0;
    skipped += (json.numPendingTests || 0) + (json.numTodoTests || 0);
    for (const suite of json.testResults || []) {
      const assertions = suite.assertionResults || [];
      for (const a of assertions) {
        if (a.status === 'failed') problems.push(`FAILED ${suite.name}: ${a.fullName}`);
      }
      // a file that could not run has no failed assertions but a failure message
      if (suite.status === 'failed' && !assertions.some((a) => a.status === 'failed')) {
        failed++;
        const firstLine =
          String(suite.message || '')
            .trim()
            .split('\n')
            .find(Boolean) || 'test file failed to run';
        problems.push(`FAILED ${suite.name}: ${firstLine}`);
      }
    }
    if (jestExit !== undefined && jestExit !== 0 && failed === 0) {
      failed++;
      problems.push(
        `jest exited with ${jestExit} although no test failed in ${report} (global setup/teardown or open handles?)`,
      );
    }
    if ((json.numTotalTests || 0) === 0) {
      failed++;
      problems.push(`jest ran no tests (${report})`);
    }
  }

  return { passed, failed, skipped, problems };
}

if (require.main === module) {
  const { passed, failed, skipped, problems } = summarize(parseArgs(process.argv.slice(2)));
  for (const p of problems) console.log(p);
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(failed > 0 ? 1 : 0);
}

module.exports = { summarize, parseArgs };
