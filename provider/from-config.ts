import { ProviderClient, type ProviderClientOptions } from './client';
import { resolveEnvironment, type ProviderConfig } from './config';
import { createWebhookVerifier } from './webhook-verifier';
import { WithdrawnKeys } from './withdrawn-keys';

/** The provider client of a configuration: its environment's address, project, key and options. */
export function providerClientFromConfig(
  config: ProviderConfig,
  extra: Partial<ProviderClientOptions> = {},
): ProviderClient {
  return new ProviderClient({
    baseUrl: resolveEnvironment(config).baseUrl,
    projectId: config.projectId,
    privateKey: config.partnerPrivateKey,
    legacyHeaders: config.legacyHeaders,
    timeoutMs: config.timeoutMs,
    ...(config.submerchantId ? { submerchantId: config.submerchantId } : {}),
    ...(config.projects.length
      ? { projects: config.projects.map((p) => ({ id: p.id, privateKey: p.privateKey })) }
      : {}),
    ...extra,
  });
}

/**
 * The webhook verifier of a configuration: its environment's service keys, less those its withdrawn-keys
 * file lists now or later (read here first: an unreadable file or a bad line stops the start). Throws
 * when the environment has no service key.
 */
export function webhookVerifierFromConfig(config: ProviderConfig): ReturnType<typeof createWebhookVerifier> {
  const withdrawn = config.withdrawnKeys ? new WithdrawnKeys(config.withdrawnKeys) : undefined;
  return createWebhookVerifier(resolveEnvironment(config).serviceKeys, withdrawn ? { withdrawn } : {});
}
