/**
 * Comments and test names describe the code as it is, never how it came to be
 * (docs/decisions/020-the-repository-stands-alone.md): no issue numbers, no sessions of work, no seeds of
 * past failures, no design decisions by number or in a file outside the repository. A decision is named
 * by its record, `docs/decisions/NNN-title.md`; history lives in git.
 *
 * `no-history-refs` checks every comment, and the name given to `describe`, `it` and `test` (with their
 * `.each`, `.only`, `.skip`, `.concurrent`, ... forms) when it is written as a string or a template.
 */

/** What is refused, and what each says about the text that matched. */
export const HISTORY_PATTERNS = [
  { pattern: /\bstop \d+\b/i, names: 'a session of work' },
  { pattern: /\bissue #?\d+\b/i, names: 'an issue number' },
  { pattern: /\bDESIGN(?: decisions?)? \d+/, names: 'a design decision by number' },
  { pattern: /shared\/DESIGN/, names: 'a design file outside the repository' },
  { pattern: /\bseed `?[0-9a-f]{10}\b/i, names: 'the seed of a past run' },
];

const HINT = 'say what the code does and why; name a decision by docs/decisions/NNN-title.md';

/** The first pattern the text matches, if any. */
export function historyRefIn(text) {
  for (const { pattern, names } of HISTORY_PATTERNS) {
    const match = pattern.exec(text);
    if (match) return { match: match[0], names };
  }
  return undefined;
}

const TEST_FUNCTIONS = new Set(['describe', 'it', 'test']);

/** `it`, `it.each`, `it.each(table)`, `describe.skip`, ...: the test function's own name, if it is one. */
function testFunctionOf(callee) {
  let node = callee;
  for (;;) {
    if (node.type === 'Identifier') return TEST_FUNCTIONS.has(node.name) ? node.name : undefined;
    if (node.type === 'MemberExpression') node = node.object;
    else if (node.type === 'CallExpression') node = node.callee;
    else return undefined;
  }
}

function nameText(arg) {
  if (!arg) return undefined;
  if (arg.type === 'Literal' && typeof arg.value === 'string') return arg.value;
  if (arg.type === 'TemplateLiteral') return arg.quasis.map((q) => q.value.cooked ?? q.value.raw).join(' ');
  return undefined;
}

const noHistoryRefs = {
  meta: {
    type: 'suggestion',
    docs: { description: 'comments and test names describe the code as it is, not its history' },
    schema: [],
    messages: {
      comment: 'this comment names {{names}} ("{{match}}"): {{hint}}',
      testName: 'this test name names {{names}} ("{{match}}"): name the behaviour it protects',
    },
  },
  create(context) {
    const sourceCode = context.sourceCode ?? context.getSourceCode();
    return {
      Program() {
        for (const comment of sourceCode.getAllComments()) {
          const found = historyRefIn(comment.value);
          if (found)
            context.report({ loc: comment.loc, messageId: 'comment', data: { ...found, hint: HINT } });
        }
      },
      CallExpression(node) {
        if (!testFunctionOf(node.callee)) return;
        const name = nameText(node.arguments[0]);
        const found = name === undefined ? undefined : historyRefIn(name);
        if (found) context.report({ node: node.arguments[0], messageId: 'testName', data: found });
      },
    };
  },
};

/** The local plugin eslint.config.mjs registers as `paysaga-local`. */
export const paysagaLocal = { rules: { 'no-history-refs': noHistoryRefs } };
