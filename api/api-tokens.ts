/**
 * API tokens and what each may do. A token carries scopes:
 *
 *   read      every GET, the event feed and its deliveries, token information, the bank list
 *   payments  create, decide (approve, cancel, finalize), refund, pay out, subscriptions
 *   admin     event endpoints, reconciliation, webhook replay, redelivery
 *
 * PAYSAGA_API_TOKENS lists them comma-separated as `<token>:<scope>+<scope>` (`paysaga token create
 * --scope read,payments` makes one); a token listed without scopes may do everything. A token is at
 * least 32 characters of `A-Za-z0-9_-`, checked at start. Logs name a token by its id: the part after
 * `pst_` for tokens made by paysaga, else the first 8 hex digits of its SHA-256; never the token.
 */
import { createHash, randomBytes } from 'node:crypto';

export const SCOPES = ['read', 'payments', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const MIN_TOKEN_LENGTH = 32;
const TOKEN_CHARS = /^[A-Za-z0-9_-]+$/;

export interface ApiToken {
  /** Safe to log: says which token acted, gives nothing away. */
  id: string;
  token: string;
  scopes: readonly Scope[];
}

export function tokenIdOf(token: string): string {
  const made = /^pst_([0-9a-f]{8})_/.exec(token);
  return made ? made[1]! : createHash('sha256').update(token).digest('hex').slice(0, 8);
}

/** A token as an embedder gives it to buildApi (no length rule: tests and in-process use). */
export function apiToken(token: string, scopes: readonly Scope[] = SCOPES): ApiToken {
  return { id: tokenIdOf(token), token, scopes };
}

/** `read+payments` as scopes; an unknown one is named. */
export function parseScopes(text: string, where: string): Scope[] {
  const scopes = text.split('+').map((s) => s.trim());
  for (const s of scopes)
    if (!(SCOPES as readonly string[]).includes(s))
      throw new Error(`${where}: unknown scope "${s}" (one or more of ${SCOPES.join(', ')})`);
  return [...new Set(scopes)] as Scope[];
}

/** PAYSAGA_API_TOKENS: every mistake (a short token, an unknown scope) is reported at start. */
export function parseApiTokens(value: string | undefined, variable = 'PAYSAGA_API_TOKENS'): ApiToken[] {
  const entries = (value ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0)
    throw new Error(
      `${variable} is not set: give one or more tokens, comma-separated (paysaga token create --scope ...)`,
    );
  return entries.map((entry, i) => {
    const [token, scopes, ...rest] = entry.split(':');
    const where = `${variable} entry ${i + 1}`;
    if (rest.length > 0 || !token) throw new Error(`${where}: write <token> or <token>:<scope>+<scope>`);
    if (!TOKEN_CHARS.test(token)) throw new Error(`${where}: a token is made of A-Za-z0-9_- only`);
    if (token.length < MIN_TOKEN_LENGTH)
      throw new Error(
        `${where}: a token of ${token.length} characters is too weak; at least ${MIN_TOKEN_LENGTH} ` +
          '(paysaga token create makes one)',
      );
    return {
      id: tokenIdOf(token),
      token,
      scopes: scopes === undefined ? SCOPES : parseScopes(scopes, where),
    };
  });
}

/** A new token (`pst_<id>_<43 random characters>`) and its PAYSAGA_API_TOKENS entry. */
export function createApiToken(scopes: readonly Scope[]): { id: string; token: string; entry: string } {
  const id = randomBytes(4).toString('hex');
  const token = `pst_${id}_${randomBytes(32).toString('base64url')}`;
  return { id, token, entry: `${token}:${scopes.join('+')}` };
}
