/** What `fn` throws (a test fails when it throws nothing): for a look at its message and cause. */
export function thrownBy(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    if (err instanceof Error) return err;
    throw new Error(`threw a non-Error: ${String(err)}`);
  }
  throw new Error('threw nothing');
}
