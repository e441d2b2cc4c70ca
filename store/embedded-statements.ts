/**
 * Named prepared statements per connection on the embedded store's one backend session, as PostgreSQL
 * keeps them per session: every client would otherwise share one namespace of statement names, and the
 * second `pg` connection to prepare `ps_1a2b...` would be refused ("prepared statement already exists").
 * Each connection's names are prefixed in the messages that carry one (Parse, Bind, Describe and Close of
 * a statement), and what a connection prepared is deallocated when it goes away. The unnamed statement
 * needs nothing: a connection's Parse, Bind and Execute run as one unit (embedded-server.ts).
 */

/** Rewrites one frontend message (type byte, length, body) for a connection's own statement names. */
export function ownStatementNames(message: Buffer, prefix: string, prepared: Set<string>): Buffer {
  const type = String.fromCharCode(message[0]!);
  if (type === 'P') {
    const [name, rest] = cstring(message, 5);
    if (!name) return message;
    prepared.add(prefix + name);
    return build('P', [prefix + name], message.subarray(rest));
  }
  if (type === 'B') {
    const [portal, at] = cstring(message, 5);
    const [statement, rest] = cstring(message, at);
    if (!statement) return message;
    return build('B', [portal, prefix + statement], message.subarray(rest));
  }
  if ((type === 'D' || type === 'C') && message[5] === 0x53 /* 'S' */) {
    const [name, rest] = cstring(message, 6);
    if (!name) return message;
    if (type === 'C') prepared.delete(prefix + name);
    return build(type, ['S', prefix + name], message.subarray(rest), 1);
  }
  return message;
}

/** The C string at `at` and the offset after its terminator. */
function cstring(message: Buffer, at: number): [string, number] {
  const end = message.indexOf(0, at);
  if (end < 0) throw new RangeError('malformed frontend message: a string without its terminator');
  return [message.toString('utf8', at, end), end + 1];
}

/** A message of `type` whose body is `fields` (the first `bytes` of them one raw byte each), then `rest`. */
function build(type: string, fields: string[], rest: Buffer, bytes = 0): Buffer {
  const parts = fields.map((f, i) => (i < bytes ? Buffer.from(f, 'latin1') : Buffer.from(`${f}\0`, 'utf8')));
  const body = Buffer.concat([...parts, rest]);
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([header, body]);
}
