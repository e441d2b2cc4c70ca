import { ProviderClient, type ProviderClientOptions } from './client';
import { resolveEnvironment, type ProviderConfig } from './config';

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
