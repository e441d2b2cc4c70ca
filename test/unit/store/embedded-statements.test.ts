/**
 * The embedded store's statement names per connection (store/embedded-statements.ts), message by message:
 * what `pg` sends is covered end to end in test/store/embedded.test.ts; Close and Describe of a statement,
 * which `pg` does not send, are covered here.
 */
import { ownStatementNames } from '../../../store/embedded-statements';

/** A frontend message: type, length, then the body's parts (strings end with a NUL; Buffers as given). */
function message(type: string, ...parts: (string | Buffer)[]): Buffer {
  const body = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(`${p}\0`) : p)));
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([header, body]);
}

const noParams = Buffer.from([0, 0]);

test('Parse, Bind, Describe and Close of a named statement carry the connection prefix; Close forgets it', () => {
  const prepared = new Set<string>();
  expect(ownStatementNames(message('P', 'ps_a', 'select 1', noParams), 'c7_', prepared)).toEqual(
    message('P', 'c7_ps_a', 'select 1', noParams),
  );
  expect([...prepared]).toEqual(['c7_ps_a']);
  const rest = Buffer.from([0, 0, 0, 0, 0, 0]);
  expect(ownStatementNames(message('B', '', 'ps_a', rest), 'c7_', prepared)).toEqual(
    message('B', '', 'c7_ps_a', rest),
  );
  expect(ownStatementNames(message('D', Buffer.from('S'), 'ps_a'), 'c7_', prepared)).toEqual(
    message('D', Buffer.from('S'), 'c7_ps_a'),
  );
  expect(ownStatementNames(message('C', Buffer.from('S'), 'ps_a'), 'c7_', prepared)).toEqual(
    message('C', Buffer.from('S'), 'c7_ps_a'),
  );
  expect(prepared.size).toBe(0);
});

test('the unnamed statement, portals and other messages pass unchanged', () => {
  const prepared = new Set<string>();
  for (const m of [
    message('P', '', 'select 1', noParams),
    message('B', 'portal', '', Buffer.from([0, 0, 0, 0, 0, 0])),
    message('D', Buffer.from('P'), 'portal'),
    message('C', Buffer.from('P'), 'portal'),
    message('E', '', Buffer.from([0, 0, 0, 0])),
    message('Q', 'select 1'),
  ])
    expect(ownStatementNames(m, 'c1_', prepared)).toBe(m);
  expect(prepared.size).toBe(0);
});

test('a name without its terminator is refused, not guessed', () => {
  const broken = Buffer.concat([Buffer.from('P'), Buffer.from([0, 0, 0, 8]), Buffer.from('ps_a')]);
  expect(() => ownStatementNames(broken, 'c1_', new Set())).toThrow(RangeError);
});
