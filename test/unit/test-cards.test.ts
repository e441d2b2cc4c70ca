/**
 * Test cards have one home, sandbox/test-cards.ts: tests, benchmarks and the demo take them from
 * `TEST_CARD` and never spell a number (a card number in a file is what the history scan looks for).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TEST_CARD, TEST_CARDS } from '../../sandbox/test-cards';

const ROOT = path.resolve(__dirname, '../..');
const HOME = path.join(ROOT, 'sandbox', 'test-cards.ts');
const SKIP = new Set(['node_modules', 'dist', '.tools', '.git', 'test-results', 'fixtures', '.data']);

function sources(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(e.name) || e.name.startsWith('.')) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) sources(full, out);
    else if (/\.(ts|js|mjs)$/.test(e.name)) out.push(full);
  }
  return out;
}

describe('test cards', () => {
  it('every numbered test card has a name, and every name a profile', () => {
    expect(new Set(Object.values(TEST_CARD))).toEqual(new Set(Object.keys(TEST_CARDS)));
  });

  it('no source file but sandbox/test-cards.ts spells a test card number', () => {
    const numbers = Object.keys(TEST_CARDS);
    const spelled = sources(ROOT)
      .filter((file) => file !== HOME)
      .flatMap((file) => {
        const text = fs.readFileSync(file, 'utf8');
        return numbers
          .filter((n) => text.includes(n))
          .map((n) => `${path.relative(ROOT, file)}: ${n.slice(-4)}`);
      });
    expect(spelled).toEqual([]);
  });
});
