/**
 * Shared by the benchmarks that need a sandbox: fresh in-memory keys, latency percentiles and the
 * machine line. Not a benchmark itself (bench/run.js runs only `<name>.bench.ts`).
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { cpus, loadavg, totalmem } from 'node:os';

export interface BenchKeyPair {
  privateKey: KeyObject;
  publicPem: string;
  privatePem: string;
}

/** A fresh RSA-2048 pair, never written to disk (the sandbox takes inline PEM). */
export function freshKeyPair(): BenchKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey,
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** Nearest-rank percentile of `sorted` (ascending), `p` in 0..100. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export const round1 = (x: number): number => Math.round(x * 10) / 10;

/** Runs `task(i)` for i in 0..n-1 with at most `concurrency` at once; returns each call's ms. */
export async function runBounded(
  n: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<{ latenciesMs: number[]; wallMs: number }> {
  const latenciesMs: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  const lane = async () => {
    for (let i = next++; i < n; i = next++) {
      const t0 = process.hrtime.bigint();
      await task(i);
      latenciesMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, lane));
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  latenciesMs.sort((a, b) => a - b);
  return { latenciesMs, wallMs };
}

/** The load when the benchmark began (support.ts is imported before a benchmark does anything). */
const LOAD_AT_START = loadavg();

/**
 * How fast this machine was when the benchmark began: the CPU time of one RSA-2048 signature (the
 * partner's requests and the sandbox's webhooks are signed so), in µs. The same machine model has
 * signed in 318 µs one day and 700-800 µs another, so absolute rates of runs on different days compare
 * only with this beside them; ratios within one run need it not.
 */
const SIGN_US_AT_START = signMicros();

function signMicros(): number {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const data = Buffer.alloc(1_024, 7);
  for (let i = 0; i < 20; i++) sign('sha256', data, privateKey);
  const before = process.cpuUsage();
  for (let i = 0; i < 200; i++) sign('sha256', data, privateKey);
  const used = process.cpuUsage(before);
  return Math.round((used.user + used.system) / 200);
}
const loads = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');

/** Cores, memory, Node, and the load average (1, 5, 15 min) at the start and now. */
export function machineLine(): string {
  return (
    `machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ` +
    `node ${process.version}, ${process.platform}; an RSA-2048 signature ${SIGN_US_AT_START} µs of CPU at ` +
    `start; load average at start ${loads(LOAD_AT_START)}, at end ${loads(loadavg())}`
  );
}

export const mib = (bytes: number): number => round1(bytes / 2 ** 20);
