import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { feeConfigSchema } from './fees';

/*
 * The sandbox configuration FILE, plus sandbox extras. Keys are given as paths to PEM files
 * (relative paths resolve against the config file's folder) or inline as PEM text (tests).
 * Keys are parsed once here; nothing downstream ever sees a PEM string again.
 */

const keySource = z.string().min(1);

export const projectConfigSchema = z.strictObject({
  id: z.string().min(1).max(128),
  /** partner public key (PEM path or inline PEM) that signs this project's requests */
  publicKey: keySource,
  webhookUrl: z.url({ protocol: /^https?$/ }).optional(),
  webhooks: z.boolean().default(true),
  /** no approve_pending: operations are approved by the service itself */
  autoApprove: z.boolean().default(false),
  /** card payments stop at finalization_pending and wait for finalize / cancel */
  hold: z.boolean().default(false),
  /** extra: how the 3-D Secure page sends the payer back to back_url */
  returnMethod: z.enum(['GET', 'POST']).default('POST'),
  /**
   * extra, opt-in: the return also carries session_id and payment_id (query for GET, fields for POST).
   * The spec promises only that the payer returns to back_url by GET or POST, so by default the GET
   * goes to back_url exactly as given and the POST carries only the issuer's MD and PaRes.
   */
  returnParams: z.boolean().default(false),
  /** extra: currency codes in webhooks are upper case ("webhooks may show it in upper case") */
  upperCaseWebhookCurrency: z.boolean().default(true),
  /** extra, opt-in: commission shown as fee_info on payments and payouts (fees.ts); absent: no fee_info */
  fees: feeConfigSchema.optional(),
});

export const sandboxConfigSchema = z.strictObject({
  /** service private key: signs webhooks */
  serviceKey: keySource,
  projects: z
    .array(projectConfigSchema)
    .min(1)
    .refine((ps) => new Set(ps.map((p) => p.id)).size === ps.length, { message: 'not_unique' }),
  /** every duration of the service (steps, QR and 3-DS lifetime, token and key lifetime, webhook retries) is multiplied by this */
  timeScale: z.number().positive().default(1),
  qrTtlSeconds: z.number().positive().default(600),
  /**
   * extra: how long an idempotency key is kept, before scaling (the spec's 24 h). Shorter in tests that
   * show what the partner does once the provider has forgotten a key.
   */
  idempotencyTtlSeconds: z
    .number()
    .positive()
    .default(24 * 3600),
  /** extra: pause between two steps of a flow, in ms before scaling */
  stepMs: z.number().nonnegative().default(1000),
  /** extra: lifetime of a 3-D Secure challenge, before scaling */
  threeDsTtlSeconds: z.number().positive().default(900),
  /** extra: real (unscaled) ms a mutating request takes; its idempotency key is "being processed" meanwhile */
  processingMs: z.number().int().nonnegative().max(60_000).default(0),
  /** extra: phones registered in FPS; when absent, every phone is registered except those ending in 0000 */
  registeredFpsPhones: z.array(z.string().min(1)).optional(),
  /** extra: base URL payers reach the sandbox at (3-DS page, QR deep link); default: the listening address */
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** extra: initial fault rules, passed to the FaultInjector (validated there) */
  faults: z.array(z.unknown()).default([]),
  /** extra: largest accepted request body in bytes */
  bodyLimit: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
});

export type ProjectConfigInput = z.input<typeof projectConfigSchema>;
export type SandboxConfigInput = z.input<typeof sandboxConfigSchema>;
export type SandboxConfig = z.output<typeof sandboxConfigSchema>;

export interface Project extends Omit<z.output<typeof projectConfigSchema>, 'publicKey'> {
  publicKey: KeyObject;
}

export interface ResolvedSandboxConfig extends Omit<SandboxConfig, 'serviceKey' | 'projects'> {
  serviceKey: KeyObject;
  projects: Map<string, Project>;
}

function pemText(source: string, baseDir: string): string {
  if (source.trimStart().startsWith('-----BEGIN')) return source;
  return readFileSync(resolve(baseDir, source), 'utf8');
}

/**
 * The spec's scheme is RSA with SHA-256; like paysaga's side (provider/signing.ts), the sandbox takes no
 * key of another type nor an RSA key under 2048 bits.
 */
function rsaKey(key: KeyObject): KeyObject {
  if (key.asymmetricKeyType !== 'rsa')
    throw new Error(`an RSA key is needed, this one is ${key.asymmetricKeyType ?? 'a secret key'}`);
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < 2048) throw new Error(`an RSA key of ${bits} bits; at least 2048 are required`);
  return key;
}

export class SandboxConfigError extends Error {
  override name = 'SandboxConfigError';
}

/** Validates the config and loads its keys. `baseDir` anchors relative key paths. */
export function resolveSandboxConfig(input: unknown, baseDir = process.cwd()): ResolvedSandboxConfig {
  const parsed = sandboxConfigSchema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new SandboxConfigError(`invalid sandbox config:\n  ${lines.join('\n  ')}`);
  }
  const cfg = parsed.data;
  const load = <T>(what: string, fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      throw new SandboxConfigError(`${what}: ${(err as Error).message}`);
    }
  };
  const serviceKey = load('serviceKey', () => rsaKey(createPrivateKey(pemText(cfg.serviceKey, baseDir))));
  const projects = new Map<string, Project>();
  for (const p of cfg.projects) {
    const publicKey = load(`projects[${p.id}].publicKey`, () =>
      rsaKey(createPublicKey(pemText(p.publicKey, baseDir))),
    );
    projects.set(p.id, { ...p, publicKey });
  }
  return { ...cfg, serviceKey, projects };
}

/** Reads a JSON config file; key paths inside it are relative to the file. */
export function loadSandboxConfigFile(file: string): ResolvedSandboxConfig {
  const path = resolve(file);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new SandboxConfigError(`cannot read sandbox config ${path}: ${(err as Error).message}`);
  }
  return resolveSandboxConfig(json, dirname(path));
}
