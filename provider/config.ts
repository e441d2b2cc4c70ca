import { z } from 'zod';

/** X-Submerchant-Id is an HTTP header value: visible ASCII, inner spaces allowed. */
export const SUBMERCHANT_ID_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * The spec's two environments each have a base address and a service public key; `baseUrl`
 * overrides the address (e.g. the sandbox). Keys are paths or inline PEM.
 */
const environmentConfig = z.object({
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** Several during a key rotation: a webhook is accepted when any of them verifies it. */
  serviceKeys: z.array(z.string().min(1)).default([]),
});

export const providerConfigSchema = z.object({
  environment: z.enum(['test', 'production']).default('test'),
  environments: z
    .object({ test: environmentConfig.optional(), production: environmentConfig.optional() })
    .default({}),
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  projectId: z.string().min(1),
  partnerPrivateKey: z.string().min(1),
  submerchantId: z
    .string()
    .regex(SUBMERCHANT_ID_PATTERN, 'visible ASCII characters (it is sent as the X-Submerchant-Id header)')
    .optional(),
  legacyHeaders: z.boolean().default(false),
  timeoutMs: z.number().int().positive().default(30_000),
});
export type ProviderConfig = z.infer<typeof providerConfigSchema>;

export interface ResolvedEnvironment {
  name: 'test' | 'production';
  baseUrl: string;
  serviceKeys: string[];
}

export function resolveEnvironment(config: ProviderConfig): ResolvedEnvironment {
  const env = config.environments[config.environment];
  const baseUrl = config.baseUrl ?? env?.baseUrl;
  if (!baseUrl) throw new Error(`provider config: no base URL for the ${config.environment} environment`);
  return { name: config.environment, baseUrl, serviceKeys: env?.serviceKeys ?? [] };
}

const list = (v: string | undefined) =>
  v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

/**
 * From environment variables (documented in the README):
 * PAYSAGA_PROVIDER_ENV, PAYSAGA_PROVIDER_URL, PAYSAGA_PROVIDER_TEST_URL, PAYSAGA_PROVIDER_PRODUCTION_URL,
 * PAYSAGA_PROVIDER_TEST_SERVICE_KEYS, PAYSAGA_PROVIDER_PRODUCTION_SERVICE_KEYS (comma-separated),
 * PAYSAGA_PROJECT_ID, PAYSAGA_PARTNER_PRIVATE_KEY, PAYSAGA_SUBMERCHANT_ID, PAYSAGA_LEGACY_HEADERS, PAYSAGA_PROVIDER_TIMEOUT_MS.
 */
export function providerConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ProviderConfig {
  const result = providerConfigSchema.safeParse({
    environment: env.PAYSAGA_PROVIDER_ENV || undefined,
    baseUrl: env.PAYSAGA_PROVIDER_URL || undefined,
    environments: {
      test: {
        baseUrl: env.PAYSAGA_PROVIDER_TEST_URL || undefined,
        serviceKeys: list(env.PAYSAGA_PROVIDER_TEST_SERVICE_KEYS),
      },
      production: {
        baseUrl: env.PAYSAGA_PROVIDER_PRODUCTION_URL || undefined,
        serviceKeys: list(env.PAYSAGA_PROVIDER_PRODUCTION_SERVICE_KEYS),
      },
    },
    projectId: env.PAYSAGA_PROJECT_ID,
    partnerPrivateKey: env.PAYSAGA_PARTNER_PRIVATE_KEY,
    submerchantId: env.PAYSAGA_SUBMERCHANT_ID || undefined,
    legacyHeaders: env.PAYSAGA_LEGACY_HEADERS === '1' || env.PAYSAGA_LEGACY_HEADERS === 'true',
    timeoutMs: env.PAYSAGA_PROVIDER_TIMEOUT_MS ? Number(env.PAYSAGA_PROVIDER_TIMEOUT_MS) : undefined,
  });
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`provider configuration from environment is invalid: ${issues}`);
  }
  return result.data;
}
