/**
 * Polls `get` until `done` holds, for tests that watch something settle over HTTP or in Temporal:
 *
 *   const v = await until('the refund succeeds', () => api.get(id), (v) => v.refunds[0]?.status === 'succeeded');
 *
 * Throws after `ms` (default 60 s) naming what never happened and the last value seen.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(
  what: string,
  get: () => Promise<T>,
  done: (v: T) => boolean,
  ms = 60_000,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms; last: ${JSON.stringify(v)}`);
    await sleep(everyMs);
  }
}
