/** What every part of the in-process client shares: the Temporal client, the provider, and defaults. */
import type { Client } from '@temporalio/client';
import type { z } from 'zod';
import type { SessionSettings } from '../common/settings';
import type { ProviderClient } from '../provider';
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
}

export interface ClientContext extends Required<
  Pick<PaymentsClientOptions, 'temporal' | 'provider' | 'taskQueue' | 'store'>
> {
  settings: SessionSettings;
  returnUrl: (sessionId: string) => string | undefined;
}

export function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw InputValidationError.fromZod(r.error);
  return r.data;
}
