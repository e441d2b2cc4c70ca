/** scripts/ci-summary.js: the closing `N passed, N failed` line of .ci/run over several jest reports. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

interface Summary {
  passed: number;
  failed: number;
  skipped: number;
  problems: string[];
}
interface Args {
  reports: { report: string; jestExit?: number }[];
  steps: { name: string; code: number }[];
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ciSummary = require('../../scripts/ci-summary.js') as {
  summarize(args: Args): Summary;
  parseArgs(argv: string[]): Args;
};

describe('ci-summary', () => {
  let dir: string;
  const report = (name: string, json: unknown) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, JSON.stringify(json));
    return file;
  };
  const passing = (n: number) => ({
    numPassedTests: n,
    numFailedTests: 0,
    numPendingTests: 0,
    numTotalTests: n,
    testResults: [],
  });

  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-ci-summary-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('pairs each --jest-exit with the --report before it; the default report stays', () => {
    expect(
      ciSummary.parseArgs([
        '--report',
        'a.json',
        '--jest-exit',
        '0',
        '--report',
        'b.json',
        '--jest-exit',
        '1',
      ]),
    ).toEqual({
      reports: [
        { report: 'a.json', jestExit: 0 },
        { report: 'b.json', jestExit: 1 },
      ],
      steps: [],
    });
    expect(ciSummary.parseArgs(['--jest-exit', '0', '--step', 'lint=1'])).toEqual({
      reports: [{ report: 'test-results/jest.json', jestExit: 0 }],
      steps: [{ name: 'lint', code: 1 }],
    });
  });

  it('adds up the tests of every report', () => {
    const s = ciSummary.summarize({
      reports: [
        { report: report('a.json', passing(40)), jestExit: 0 },
        { report: report('b.json', passing(4)), jestExit: 0 },
      ],
      steps: [{ name: 'lint', code: 0 }],
    });
    expect(s).toEqual({ passed: 44, failed: 0, skipped: 0, problems: [] });
  });

  it('a missing second report, or its jest failing with no failed test, is one failure each', () => {
    const missing = ciSummary.summarize({
      reports: [
        { report: report('a.json', passing(40)), jestExit: 0 },
        { report: path.join(dir, 'absent.json'), jestExit: 1 },
      ],
      steps: [],
    });
    expect([missing.passed, missing.failed]).toEqual([40, 1]);
    expect(missing.problems[0]).toMatch(/no readable jest report at .*absent\.json/);

    const exited = ciSummary.summarize({
      reports: [
        { report: report('a.json', passing(40)), jestExit: 0 },
        { report: report('b.json', passing(4)), jestExit: 1 },
      ],
      steps: [],
    });
    expect([exited.passed, exited.failed]).toEqual([44, 1]);
    expect(exited.problems[0]).toMatch(/jest exited with 1 although no test failed in .*b\.json/);
  });
});
