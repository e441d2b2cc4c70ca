export { SANDBOX_STORE_FILE, startSandbox, type RunningSandbox, type StartSandboxOptions } from './server';
export { SandboxStoreError } from './sqlite-store';
export {
  loadSandboxConfigFile,
  resolveSandboxConfig,
  sandboxConfigSchema,
  projectConfigSchema,
  SandboxConfigError,
  type ProjectConfigInput,
  type ResolvedSandboxConfig,
  type SandboxConfigInput,
} from './config';
export { TEST_CARD, TEST_CARDS } from './test-cards';
export { FPS_BANKS } from './banks';
export type { LedgerEntry, LedgerKind } from './ledger';
