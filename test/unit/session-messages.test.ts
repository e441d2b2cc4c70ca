/**
 * The client names a refused decision or refund by the kind's table (common/kinds.ts KIND_DECISIONS,
 * PAYMENT_KINDS); each workflow file registers its messages itself. The two must say the same.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KIND_DECISIONS, PAYMENT_KINDS, SESSION_KINDS, SESSION_WORKFLOW_TYPES } from '../../common/kinds';

const WORKFLOWS = path.resolve(__dirname, '../../workflows');

/** The source of the file that defines the workflow function `type`. */
function workflowSource(type: string): string {
  const file = fs
    .readdirSync(WORKFLOWS)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => fs.readFileSync(path.join(WORKFLOWS, f), 'utf8'))
    .find((text) => text.includes(`export async function ${type}(`));
  if (!file) throw new Error(`no workflows/*.ts defines ${type}`);
  return file;
}

describe.each(SESSION_KINDS)('%s', (kind) => {
  const source = workflowSource(SESSION_WORKFLOW_TYPES[kind]);

  it('its workflow registers exactly the decisions of KIND_DECISIONS', () => {
    const registered = /acceptDecisions\(\s*\w+,\s*\[([^\]]*)\]/.exec(source)?.[1] ?? '';
    const names = [...registered.matchAll(/'(\w+)'/g)].map((m) => m[1]);
    expect(names.sort()).toEqual([...KIND_DECISIONS[kind]].sort());
  });

  it('its workflow takes refunds exactly when it is a payment kind', () => {
    expect(/acceptRefunds\(/.test(source)).toBe((PAYMENT_KINDS as readonly string[]).includes(kind));
  });
});
