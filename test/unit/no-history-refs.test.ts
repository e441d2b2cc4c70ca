/**
 * Comments and test names describe the code as it is (eslint.history-refs.mjs,
 * docs/decisions/020-the-repository-stands-alone.md): the linter, with the project's configuration,
 * refuses a comment or a test name that points at the project's history, and accepts one that points at a
 * decision's record. The history is planted here as text built at run time, so this file itself passes.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const RULE = 'paysaga-local/no-history-refs';

/** Lints `code` as if it were `file`, with the project's ESLint configuration (ESLint is ESM: a child). */
function refusals(code: string, file = 'common/planted.ts'): string[] {
  const script = `
    import { ESLint } from 'eslint';
    const [code, filePath] = JSON.parse(process.argv[1]);
    const [result] = await new ESLint({ cwd: process.cwd() }).lintText(code, { filePath });
    process.stdout.write(JSON.stringify(result.messages));`;
  const run = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', script, JSON.stringify([code, file])],
    {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  if (run.status !== 0) throw new Error(`eslint failed (${run.status}): ${run.stderr}`);
  const messages = JSON.parse(run.stdout) as { ruleId: string | null; message: string }[];
  return messages.filter((m) => m.ruleId === RULE).map((m) => m.message);
}

// Built so that no line of this file spells what the rule refuses.
const issue = ['issue', '10'].join(' ');
const stop = ['stop', '29'].join(' ');
const design = ['DESIGN', 'decision', '16'].join(' ');
const sharedDesign = ['..', 'shared', 'DESIGN.md'].join('/');
const seed = ['seed', 'ea49ebefc3'].join(' ');

describe('the linter refuses history in comments and test names', () => {
  it.each([
    ['an issue number in a line comment', `// fixed for ${issue}\nexport const a = 1;\n`, `("${issue}")`],
    [
      'a session of work in a block comment',
      `/**\n * Added at ${stop}.\n */\nexport const a = 1;\n`,
      `("${stop}")`,
    ],
    [
      'a design decision by number',
      `/* the worker verifies again (${design}) */\nexport const a = 1;\n`,
      `("${design}")`,
    ],
    [
      'a design file outside the repository',
      `// see ${sharedDesign}\nexport const a = 1;\n`,
      '("shared/DESIGN")',
    ],
    ['the seed of a past failure', `// found by the suite, ${seed}\nexport const a = 1;\n`, `("${seed}")`],
  ])('%s', (_what, code, quoted) => {
    const found = refusals(code);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(`this comment names`);
    expect(found[0]).toContain(quoted);
  });

  it('refuses a test named after an issue, in every form a test function takes', () => {
    const code = [
      `describe('${issue} acceptance', () => {`,
      `  it("${issue}: a refund", () => {});`,
      `  it.each([[1]])(\`${issue} with %s\`, () => {});`,
      `  test.concurrent('after ${stop}', async () => {});`,
      `});`,
      '',
    ].join('\n');
    const found = refusals(code, 'test/unit/planted.test.ts');
    expect(found).toHaveLength(4);
    for (const message of found) expect(message).toContain('this test name names');
  });

  it('accepts comments and test names that describe the code, and a decision named by its record', () => {
    const code = [
      '/** Verified again by the worker (docs/decisions/016-results-are-proven.md). */',
      '// a refund is an issue for the partner; stop at 5 tries; the seed is printed',
      `describe('a refund after a partial finalize refunds what was captured', () => {`,
      `  it('stops polling once the session is final', () => {});`,
      '});',
      '',
    ].join('\n');
    expect(refusals(code, 'test/unit/planted.test.ts')).toEqual([]);
  });
});
