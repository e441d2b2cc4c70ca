/** What every part of the in-process client shares: the Temporal client, the provider, and defaults. */
import type { Client } from '@temporalio/client';
import type { z } from 'zod';
import type { SessionSettings } from '../common/settings';
import type { ProviderClient } from '../provider';
import type { ProjectUse } from '../provider/config';
import type { Store } from '../store/database';
import { InputValidationError } from './errors';
import type { SessionReturnUrls } from './return-url';

export interface PaymentsClientOptions {
  temporal: Client;
  provider: ProviderClient;
  taskQueue: string;
  /** paysaga's store of record (store/database.ts): references, sessions, events. */
  store: Store;
  /** Defaults of every session (per-session overrides merge over them). */
  settings?: SessionSettings;
  /** paysaga's signed back_url of a session (client/return-url.ts), when a public URL is configured. */
  returnUrls?: SessionReturnUrls;
  /**
   * The provider project a use goes to when it is not the default one (PAYSAGA_PROJECTS; provider/config.ts
   * projectFor); the provider client must hold that project's key.
   */
  projectFor?: (use: ProjectUse) => string | undefined;
  /**
   * The provider environment the client charges in (PAYSAGA_PROVIDER_ENV): in `test` (the sandbox, the
   * provider's test environment) a subscription may bill in periods under a day and retry within a
   * minute; never in `production` (the default).
   */
  providerEnvironment?: 'test' | 'production';
}

export interface ClientContext extends Required<
  Pick<PaymentsClientOptions, 'temporal' | 'provider' | 'taskQueue' | 'store'>
> {
  settings: SessionSettings;
  returnUrl: (sessionId: string) => string | undefined;
  /** `{ projectId }` when a use goes to another project than the default, else `{}`. */
  projectOf: (use: ProjectUse) => { projectId?: string };
}

export function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw InputValidationError.fromZod(r.error);
  return r.data;
}
