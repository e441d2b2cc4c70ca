import { verify } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Project } from './config';
import { ApiError } from './errors';

/*
 * Partner request authentication (spec, Authentication): RSA-SHA256, Base64, over the body bytes exactly
 * as received, with the public key of the project named by the header. Legacy header names are accepted.
 */

const PROJECT_HEADERS = ['x-project-id', 'x-partner-project'] as const;
const SIGNATURE_HEADERS = ['x-signature', 'x-partner-sign'] as const;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function header(headers: IncomingHttpHeaders, names: readonly string[]): string | undefined {
  for (const name of names) {
    const v = headers[name];
    if (typeof v === 'string' && v.length > 0) return v;
  }
  return undefined;
}

const refused = (field: string, rule: string) => new ApiError('authentication_failed', `${field}.${rule}`);

/** The project whose key signed `body`, or an authentication_failed error. */
export function authenticate(
  headers: IncomingHttpHeaders,
  body: Buffer,
  projects: ReadonlyMap<string, Project>,
): Project {
  const projectId = header(headers, PROJECT_HEADERS);
  if (projectId === undefined) throw refused('X-Project-Id', 'not_null');
  const project = projects.get(projectId);
  if (!project) throw refused('X-Project-Id', 'unknown');
  const signature = header(headers, SIGNATURE_HEADERS)?.trim();
  if (signature === undefined) throw refused('X-Signature', 'not_null');
  if (!BASE64.test(signature) || signature.length % 4 !== 0) throw refused('X-Signature', 'invalid_format');
  let ok = false;
  try {
    ok = verify('sha256', body, project.publicKey, Buffer.from(signature, 'base64'));
  } catch {
    ok = false;
  }
  if (!ok) throw refused('X-Signature', 'invalid');
  return project;
}

export function submerchantOf(headers: IncomingHttpHeaders): string | undefined {
  const v = headers['x-submerchant-id'];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}
