/**
 * Jest global teardown: searches every workflow history and every row of the store of the run for card
 * data (a finding fails the run), then stops the store and the shared dev server started by
 * test/global-setup.ts and removes its temp dir.
 */
import * as fs from 'node:fs';
import type { PaysagaTestGlobals } from './global-setup';
import { scanAllHistories, type HistoryScan } from './history-scan';
import { scanStore, type StoreScan } from './store-scan';

export default async function globalTeardown(): Promise<void> {
  const state: PaysagaTestGlobals | undefined = globalThis.__PAYSAGA_TEST__;
  if (!state) return;
  globalThis.__PAYSAGA_TEST__ = undefined;
  let scan: HistoryScan | undefined;
  let storeScan: StoreScan | undefined;
  let scanError: unknown;
  try {
    scan = await scanAllHistories(state.env.client);
    console.log(
      `[paysaga test teardown] ${scan.scanned} workflow histories searched for card data and endpoint secrets: ${scan.findings.length} found`,
    );
    if (state.store) {
      storeScan = await scanStore(state.store.url);
      console.log(
        `[paysaga test teardown] ${storeScan.tables} store tables searched for card data and endpoint secrets: ${storeScan.findings.length} found`,
      );
    }
  } catch (err) {
    scanError = err;
  }
  try {
    await state.store?.stop();
    await state.env.teardown();
  } finally {
    fs.rmSync(state.tempDir, { recursive: true, force: true });
  }
  if (scanError) throw scanError;
  if (scan?.findings.length) {
    throw new Error(
      `card data found in workflow histories (docs/decisions/002-card-data-never-enters-temporal.md):\n${scan.findings.join('\n')}`,
    );
  }
  if (storeScan?.findings.length)
    throw new Error(
      `card data found in the store (docs/decisions/002-card-data-never-enters-temporal.md):\n${storeScan.findings.join('\n')}`,
    );
}
