/** Jest global teardown: stops the shared dev server started by test/global-setup.ts and removes its temp dir. */
import * as fs from 'node:fs';
import type { PaysagaTestGlobals } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const state: PaysagaTestGlobals | undefined = globalThis.__PAYSAGA_TEST__;
  if (!state) return;
  globalThis.__PAYSAGA_TEST__ = undefined;
  try {
    await state.env.teardown();
  } finally {
    fs.rmSync(state.tempDir, { recursive: true, force: true });
  }
}
