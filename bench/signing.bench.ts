/**
 * Signing and webhook verification: KeyObjects parsed once versus a PEM string per call,
 * and the whole webhook verifier. Run: `npm run bench -- signing` (BENCH_N sets the count).
 */
import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import { createWebhookVerifier, serializeRequestBody, signBytes } from '../provider';

function time(
  label: string,
  n: number,
  fn: () => void,
): { label: string; opsPerSec: number; usPerOp: number } {
  for (let i = 0; i < Math.min(200, n); i++) fn(); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  const ns = Number(process.hrtime.bigint() - start);
  return { label, opsPerSec: Math.round((n / ns) * 1e9), usPerOp: Math.round(ns / n / 100) / 10 };
}

export function runSigningBench(n = 2_000): ReturnType<typeof time>[] {
  const service = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pubPem = service.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const privPem = service.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const event = {
    type: 'checkout_results',
    session_info: {
      id: 'ps_1',
      transaction_status: 'completed',
      payments: [
        { id: 'pm_1', transaction_status: 'successful', sum_info: { sum: 10000, currency_code: 'RUB' } },
      ],
    },
  };
  const raw = serializeRequestBody(event);
  const sig = signBytes(raw, service.privateKey);
  const sigBuf = Buffer.from(sig, 'base64');
  const verifier = createWebhookVerifier([pubPem]);
  return [
    time('sign, KeyObject', n, () => sign('sha256', raw, service.privateKey)),
    time('sign, PEM per call', n, () => sign('sha256', raw, privPem)),
    time('verify, KeyObject', n, () => verify('sha256', raw, service.publicKey, sigBuf)),
    time('verify, PEM per call', n, () => verify('sha256', raw, pubPem, sigBuf)),
    time('verify, createPublicKey per call', n, () => verify('sha256', raw, createPublicKey(pubPem), sigBuf)),
    time('webhook verifier (verify + parse + zod)', n, () => {
      if (!verifier(raw, sig).ok) throw new Error('bench: verification failed');
    }),
  ];
}

export function main(): void {
  const results = runSigningBench(Number(process.env.BENCH_N ?? 2_000));
  console.log(
    `machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`,
  );
  console.table(results);
}
