import * as fs from 'node:fs';
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

/**
 * What a project may be used for: a session kind, or `recurring_client` (customer-initiated recurring
 * payments with 3-D Secure, for which the spec recommends a project of its own).
 */
export const PROJECT_USES = [
  'card_checkout',
  'payment_form',
  'fps_payment',
  'fps_binding',
  'recurring_payment',
  'recurring_client',
  'payout',
  'identity_check',
] as const;
export type ProjectUse = (typeof PROJECT_USES)[number];

/** A further project of the partner: its id, its private key (path or PEM), and what it is used for. */
const projectConfig = z.object({
  id: z.string().min(1).max(128),
  privateKey: z.string().min(1),
  use: z.array(z.enum(PROJECT_USES)).default([]),
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
  /**
   * The file listing service keys withdrawn since start (PAYSAGA_WITHDRAWN_KEYS; `paysaga keys withdraw`
   * writes it, provider/withdrawn-keys.ts): a key listed there verifies nothing, re-read without restart.
   */
  withdrawnKeys: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive().default(30_000),
  /** More projects (PAYSAGA_PROJECTS); `projectId` is the default for every use none of them claims. */
  projects: z
    .array(projectConfig)
    .max(20)
    .default([])
    .superRefine((projects, ctx) => {
      const ids = new Set<string>();
      const uses = new Map<string, string>();
      projects.forEach((p, i) => {
        if (ids.has(p.id))
          ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `${p.id} is listed twice` });
        ids.add(p.id);
        for (const use of p.use) {
          const other = uses.get(use);
          if (other)
            ctx.addIssue({ code: 'custom', path: [i, 'use'], message: `${use} is already used by ${other}` });
          uses.set(use, p.id);
        }
      });
    }),
});
export type ProviderConfig = z.infer<typeof providerConfigSchema>;

/** The project a use goes to: the one configured for it, else the default project. */
export function projectFor(config: Pick<ProviderConfig, 'projectId' | 'projects'>, use: ProjectUse): string {
  return config.projects.find((p) => p.use.includes(use))?.id ?? config.projectId;
}

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
 * PAYSAGA_PROJECTS: a JSON array `[{"id", "privateKey", "use": [...]}]`, or `@<file>` holding it.
 * Unparseable JSON is passed on as is, so the schema names the field.
 */
function projectsFromEnv(value: string | undefined): unknown {
  if (!value) return undefined;
  const text = value.startsWith('@') ? fs.readFileSync(value.slice(1), 'utf8') : value;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error('provider configuration from environment is invalid: PAYSAGA_PROJECTS: not JSON');
  }
}

/**
 * From environment variables (documented in docs/configuration.md):
 * PAYSAGA_PROVIDER_ENV, PAYSAGA_PROVIDER_URL, PAYSAGA_PROVIDER_TEST_URL, PAYSAGA_PROVIDER_PRODUCTION_URL,
 * PAYSAGA_PROVIDER_TEST_SERVICE_KEYS, PAYSAGA_PROVIDER_PRODUCTION_SERVICE_KEYS (comma-separated),
 * PAYSAGA_PROJECT_ID, PAYSAGA_PARTNER_PRIVATE_KEY, PAYSAGA_SUBMERCHANT_ID, PAYSAGA_LEGACY_HEADERS, PAYSAGA_PROVIDER_TIMEOUT_MS,
 * PAYSAGA_WITHDRAWN_KEYS.
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
    withdrawnKeys: env.PAYSAGA_WITHDRAWN_KEYS?.trim() || undefined,
    timeoutMs: env.PAYSAGA_PROVIDER_TIMEOUT_MS ? Number(env.PAYSAGA_PROVIDER_TIMEOUT_MS) : undefined,
    projects: projectsFromEnv(env.PAYSAGA_PROJECTS),
  });
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`provider configuration from environment is invalid: ${issues}`);
  }
  return result.data;
}
