/**
 * One-way layers (eslint.layers.mjs, docs/architecture.md "The layers"): the linter refuses an import against
 * the direction, planted here in a file of each layer; neither the top-level folders nor the files import one
 * another in a cycle.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describeGraph, fileGraph, findCycle, folderGraph } from '../helpers/folder-graph';

const ROOT = path.resolve(__dirname, '..', '..');
const LAYERS = [
  'provider',
  'common',
  'platform',
  'sandbox',
  'store',
  'activities',
  'workflows',
  'client',
  'workers',
  'api',
  'cli',
];

interface Planted {
  /** Where the planted file pretends to live (it is linted from memory, never written). */
  file: string;
  code: string;
}
interface Finding {
  ruleId: string | null;
  message: string;
}

/** Lints every planted file with the project's ESLint configuration, in one child process (ESLint is ESM). */
function lint(planted: Planted[]): Finding[][] {
  const script = `
    import { ESLint } from 'eslint';
    const planted = JSON.parse(process.argv[1]);
    const eslint = new ESLint({ cwd: process.cwd() });
    const out = [];
    for (const { file, code } of planted) {
      const [result] = await eslint.lintText(code, { filePath: file });
      out.push(result.messages.map(({ ruleId, message }) => ({ ruleId, message })));
    }
    process.stdout.write(JSON.stringify(out));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(planted)], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (run.status !== 0) throw new Error(`eslint failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as Finding[][];
}

const valueImport = (file: string, from: string): Planted => ({
  file,
  code: `import * as imported from '${from}';\nexport const planted = imported;\n`,
});
const typeImport = (file: string, from: string): Planted => ({
  file,
  code: `import type * as imported from '${from}';\nexport type Planted = typeof imported;\n`,
});

/** Imports against the direction: each must fail `boundaries/dependencies`. */
const WRONG: Planted[] = [
  valueImport('provider/planted.ts', '../common/kinds'),
  valueImport('provider/schemas/planted.ts', '../client'),
  valueImport('common/planted.ts', '../provider/client'),
  valueImport('common/planted.ts', '../client/reads'),
  valueImport('common/kinds.ts', '../platform/codec'),
  valueImport('platform/planted.ts', '../store/database'),
  valueImport('platform/planted.ts', '../client/reads'),
  valueImport('store/planted.ts', '../platform/session-runs'),
  valueImport('sandbox/planted.ts', '../platform/codec'),
  valueImport('sandbox/planted.ts', '../common/kinds'),
  valueImport('sandbox/planted.ts', '../provider/client'),
  valueImport('activities/planted.ts', '../client/reads'),
  typeImport('activities/planted.ts', '../workflows/checkout'),
  valueImport('workflows/planted.ts', '../activities/failures'),
  valueImport('workflows/planted.ts', '../platform/codec'),
  valueImport('workflows/planted.ts', '../provider/schemas'),
  typeImport('workflows/planted.ts', '../client/reads'),
  valueImport('client/planted.ts', '../workflows/checkout'),
  valueImport('client/planted.ts', '../activities/failures'),
  valueImport('client/planted.ts', '../workers/worker'),
  valueImport('workers/planted.ts', '../api/server'),
  valueImport('workers/planted.ts', '../cli/main'),
  valueImport('api/planted.ts', '../workers/worker'),
  valueImport('api/planted.ts', '../workflows/checkout'),
  valueImport('api/planted.ts', '../activities/failures'),
  { file: 'activities/planted.ts', code: "export { toFailure } from '../client/errors';\n" },
  { file: 'api/planted.ts', code: "export const load = () => import('../workers/worker');\n" },
];

/** Imports along the direction: none may be reported. */
const RIGHT: Planted[] = [
  valueImport('provider/planted.ts', './schemas'),
  valueImport('common/planted.ts', '../provider/schemas'),
  valueImport('common/planted.ts', '../provider/schemas/card'),
  valueImport('common/steps.ts', '../provider/schemas'),
  valueImport('platform/planted.ts', '../common/messages'),
  typeImport('store/planted.ts', '../platform/session-runs'),
  valueImport('activities/planted.ts', '../platform/session-runs'),
  valueImport('sandbox/planted.ts', '../provider/schemas/card'),
  valueImport('sandbox/planted.ts', '../provider/schemas/endpoints'),
  valueImport('activities/planted.ts', '../provider/client'),
  typeImport('workflows/planted.ts', '../activities/failures'),
  typeImport('workflows/planted.ts', '../common/views'),
  valueImport('workflows/planted.ts', '../common/messages'),
  valueImport('client/planted.ts', '../common/session-view'),
  valueImport('workflows/planted.ts', '../common/session-view'),
  valueImport('activities/planted.ts', '../common/snapshot'),
  typeImport('client/planted.ts', '../workflows/checkout'),
  valueImport('workers/planted.ts', '../activities/provider-activities'),
  valueImport('api/planted.ts', '../client/reads'),
  valueImport('cli/planted.ts', '../workers/worker'),
  valueImport('test/planted.ts', '../workers/worker'),
];

/** Workflow code: no Node built-ins and no Node-only package, as values. */
const WORKFLOW_WRONG: Planted[] = [
  valueImport('workflows/planted.ts', 'node:crypto'),
  valueImport('workflows/planted.ts', 'crypto'),
  valueImport('workflows/planted.ts', '@temporalio/client'),
  valueImport('common/events.ts', 'node:fs'),
  valueImport('provider/schemas/card.ts', 'node:util'),
];
const WORKFLOW_RIGHT: Planted[] = [
  typeImport('workflows/planted.ts', '@temporalio/client'),
  valueImport('workflows/planted.ts', '@temporalio/workflow'),
];

describe('layers', () => {
  let results: Finding[][];
  const all = [...WRONG, ...RIGHT, ...WORKFLOW_WRONG, ...WORKFLOW_RIGHT];
  const resultOf = (p: Planted) => results[all.indexOf(p)]!;

  beforeAll(() => {
    results = lint(all);
  }, 120_000);

  it.each(WRONG.map((p) => [p.file, p.code.split('\n')[0], p] as const))(
    'the linter refuses %s: %s',
    (_file, _code, planted) => {
      const rules = resultOf(planted).map((f) => f.ruleId);
      expect(rules).toContain('boundaries/dependencies');
    },
  );

  it.each(RIGHT.map((p) => [p.file, p.code.split('\n')[0], p] as const))(
    'the linter accepts %s: %s',
    (_file, _code, planted) => {
      expect(resultOf(planted)).toEqual([]);
    },
  );

  it.each(WORKFLOW_WRONG.map((p) => [p.file, p.code.split('\n')[0], p] as const))(
    'workflow code may not load %s: %s',
    (_file, _code, planted) => {
      expect(resultOf(planted).map((f) => f.ruleId)).toContain('no-restricted-imports');
    },
  );

  it.each(WORKFLOW_RIGHT.map((p) => [p.file, p.code.split('\n')[0], p] as const))(
    'workflow code may %s: %s',
    (_file, _code, planted) => {
      expect(resultOf(planted)).toEqual([]);
    },
  );

  it('the top-level folders import one another without a cycle', () => {
    const graph = folderGraph(ROOT, LAYERS);
    const cycle = findCycle(graph);
    expect({ cycle, graph: describeGraph(graph) }).toEqual({ cycle: undefined, graph: expect.any(String) });
    // the scan sees the imports that exist (a graph without edges would find no cycle either)
    expect([...graph.get('api')!]).toEqual(expect.arrayContaining(['client', 'common', 'provider']));
  });

  // Not even through `import type`: two files that need each other are one file, or share a third.
  it('no two source files import each other, directly or in a circle', () => {
    const graph = fileGraph(ROOT, LAYERS);
    expect(findCycle(graph)).toBeUndefined();
    expect([...graph.get(path.join('sandbox', 'webhooks.ts'))!]).toContain(path.join('sandbox', 'faults.ts'));
  });

  it('the cycle search finds a planted cycle', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(findCycle(graph)).toEqual(['a', 'b', 'c', 'a']);
    graph.get('c')!.delete('a');
    expect(findCycle(graph)).toBeUndefined();
  });
});
