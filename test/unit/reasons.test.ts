/**
 * Structured reasons: `reason` and `attention` are a code from a closed list with words beside it; the
 * OpenAPI document lists the codes as enums; and nothing in paysaga or its tests reads a reason's (or an
 * error message's) words to decide anything.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ATTENTION_CODES, END_REASON_CODES, reason, reasonText, refusalReason } from '../../common/reasons';
import { servedOpenApi, type Schema } from '../helpers/openapi-doc';

describe('reasons', () => {
  it('a reason in one line for logs: code, what it is about, the words', () => {
    const r = reason('provider_call_failing', 'timed out', { subject: 'transaction/state' });
    expect(reasonText(r)).toBe('provider_call_failing (transaction/state): timed out');
    expect(
      reasonText(refusalReason('start_failed', { errorCode: 'invalid_request', description: 'x.y' })),
    ).toBe('start_failed (invalid_request): x.y');
  });
});

describe('the OpenAPI document lists the reason codes', () => {
  let doc: Schema;
  beforeAll(async () => {
    doc = await servedOpenApi();
  });

  /** Every `enum` that sits under a `code` property of a schema titled `title`, anywhere in the document. */
  function codeEnums(node: unknown, title: string, found: unknown[][] = []): unknown[][] {
    if (Array.isArray(node)) node.forEach((n) => codeEnums(n, title, found));
    else if (node && typeof node === 'object') {
      const o = node as Schema;
      const code = (o.properties as Schema | undefined)?.code as Schema | undefined;
      if (o.title === title && Array.isArray(code?.enum)) found.push(code.enum);
      Object.values(o).forEach((v) => codeEnums(v, title, found));
    }
    return found;
  }

  it('EndReason and Attention: every code, as an enum, wherever a session or subscription shows one', () => {
    const ends = codeEnums(doc, 'EndReason');
    const attentions = codeEnums(doc, 'Attention');
    // session reason, payout reason, refund reason, charge reason, dunning lastReason, canceledReason
    expect(ends.length).toBeGreaterThanOrEqual(6);
    expect(attentions.length).toBeGreaterThanOrEqual(2);
    for (const e of ends) expect(e).toEqual([...END_REASON_CODES]);
    for (const e of attentions) expect(e).toEqual([...ATTENTION_CODES]);
  });

  it('api/README.md lists every code', () => {
    const readme = fs.readFileSync(path.resolve(__dirname, '../../api/README.md'), 'utf8');
    const missing = [...END_REASON_CODES, ...ATTENTION_CODES].filter((c) => !readme.includes(`\`${c}\``));
    expect(missing).toEqual([]);
  });
});

describe('nothing reads the words of a reason or an error message', () => {
  const ROOT = path.resolve(__dirname, '../..');
  const FOLDERS = [
    'activities',
    'api',
    'cli',
    'client',
    'common',
    'platform',
    'provider',
    'sandbox',
    'store',
    'workers',
    'workflows',
    'scripts',
    'bench',
    'test',
  ];
  /** This file (which names what it looks for). */
  const EXEMPT = new Set([
    'test/unit/reasons.test.ts',
    // Its own scan of source for `.message` matching (the pattern names what it looks for).
    'test/unit/api-sources.test.ts',
  ]);
  const files = (dir: string): string[] =>
    fs.existsSync(path.join(ROOT, dir))
      ? fs
          .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
          .flatMap((e) =>
            e.isDirectory()
              ? e.name === 'node_modules'
                ? []
                : files(path.join(dir, e.name))
              : /\.(ts|js|mjs)$/.test(e.name)
                ? [path.join(dir, e.name)]
                : [],
          )
      : [];

  /** Text matching: a prefix, a pattern, a part of a string. */
  const MATCHING =
    /\.(startsWith|endsWith|includes|indexOf|match|matchAll|search)\(|\.test\(|toMatch\(|stringMatching\(/;
  /** `toThrow(/.../)`, also with the pattern on the next line. */
  const THROWN_PATTERN = /\.(toThrow|toThrowError)\(\s*\//;
  /** A reason or attention anywhere; an error's message, or the provider's error description. */
  const REASON = /\b(reason|attention|lastReason|canceledReason)\b(?!s\b)/;
  const MESSAGE = /(\.message|error_description|\.error[!?]?\)|stderr)\b/;

  function offenders(pick: (line: string) => boolean): string[] {
    return FOLDERS.flatMap(files)
      .filter((f) => !EXEMPT.has(f))
      .flatMap((f) =>
        fs
          .readFileSync(path.join(ROOT, f), 'utf8')
          .split('\n')
          .map((line, i) => [line, `${f}:${i + 1}`] as const)
          .filter(([line]) => !/^\s*(\/\/|\*)/.test(line) && MATCHING.test(line) && pick(line))
          .map(([, where]) => where),
      );
  }

  it('no reason or attention is matched by its text, in source or tests', () => {
    expect(offenders((line) => REASON.test(line))).toEqual([]);
  });

  it('no error message or provider description is matched by its text, in source or tests', () => {
    expect(offenders((line) => MESSAGE.test(line))).toEqual([]);
  });

  it('no thrown error is matched by a pattern over its message, in tests', () => {
    // toThrow(/.../) matches the words; toThrow(new Error('...')) and a class compare whole values.
    const offenders = FOLDERS.flatMap(files)
      .filter((f) => !EXEMPT.has(f))
      .filter((f) => THROWN_PATTERN.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('the scan sees what it looks for (a check that cannot fail would prove nothing)', () => {
    expect(THROWN_PATTERN.test('expect(() => f()).toThrow(\n  /boom/,\n);')).toBe(true);
    expect(THROWN_PATTERN.test("expect(() => f()).toThrow(new Error('boom'));")).toBe(false);
    const planted = [
      "if (s.attention?.reason.startsWith('drift')) x();",
      'expect(err.message).toMatch(/boom/);',
    ];
    expect(planted.filter((l) => MATCHING.test(l) && REASON.test(l))).toHaveLength(1);
    expect(planted.filter((l) => MATCHING.test(l) && MESSAGE.test(l))).toHaveLength(1);
  });
});
