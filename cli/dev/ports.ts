/** Ports of `paysaga dev`: parse, pick free ones for 0, and refuse busy ones with a clear message. */
import { createServer } from 'node:net';

export interface PortSpec {
  /** What listens there, e.g. `API`. */
  name: string;
  port: number;
  /** How to choose another one, e.g. `--public-port or PAYSAGA_PUBLIC_PORT`. */
  how: string;
}

export function parsePort(value: string, what: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 65_535)
    throw new Error(`${what} must be an integer 0..65535, got ${JSON.stringify(value)}`);
  return n;
}

/** Resolves to the error code of listening on host:port (e.g. `EADDRINUSE`), or undefined when it is free. */
export function probePort(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** Where free ports are chosen: under the OS's ephemeral ports (32768 and up on Linux, 49152 elsewhere). */
const FREE_FROM = 20_000;
const FREE_BELOW = 32_768;

/**
 * A port free right now on `host`, none of `taken`, under the ephemeral range. A port chosen here is
 * listened on later, often by another process (the Temporal dev server's UI, a child's API); an
 * ephemeral port may meanwhile become the local end of an outgoing connection (the Temporal server's
 * services connect to each other while it starts), and the listen then fails with EADDRINUSE. (The
 * Temporal server also keeps a service's port in a smallint column, which refuses 32768 and up.)
 */
export async function freePort(host: string, taken: readonly number[] = []): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = FREE_FROM + Math.floor(Math.random() * (FREE_BELOW - FREE_FROM));
    if (!taken.includes(port) && (await probePort(host, port)) === undefined) return port;
  }
  throw new Error(`no free port between ${FREE_FROM} and ${FREE_BELOW - 1} on ${host}`);
}

export class PortsBusyError extends Error {
  override name = 'PortsBusyError';
}

/**
 * Replaces 0 by free ports (each different), then checks that every port can be listened on. One error
 * lists every busy port and how to choose another.
 */
export async function settlePorts(host: string, specs: PortSpec[]): Promise<PortSpec[]> {
  const taken = new Set(specs.map((s) => s.port).filter((p) => p !== 0));
  const settled: PortSpec[] = [];
  for (const spec of specs) {
    let port = spec.port;
    while (port === 0 || (spec.port === 0 && taken.has(port))) port = await freePort(host);
    taken.add(port);
    settled.push({ ...spec, port });
  }
  const seen = new Map<number, string>();
  const problems: string[] = [];
  for (const s of settled) {
    const other = seen.get(s.port);
    if (other)
      problems.push(`port ${s.port} is given to both ${other} and ${s.name}: choose another with ${s.how}`);
    seen.set(s.port, s.name);
  }
  for (const s of settled) {
    const code = await probePort(host, s.port);
    if (code === 'EADDRINUSE')
      problems.push(
        `port ${s.port} (${s.name}) on ${host} is already in use: stop what uses it, or choose another with ${s.how}`,
      );
    else if (code)
      problems.push(`cannot listen on ${host}:${s.port} (${s.name}): ${code}; choose another with ${s.how}`);
  }
  if (problems.length) throw new PortsBusyError(problems.join('\n'));
  return settled;
}
