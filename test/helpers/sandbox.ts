import { sign, type KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { request } from 'undici';
import { startSandbox, type RunningSandbox } from '../../sandbox';
import { SANDBOX_STORE_FILE } from '../../sandbox/server';
import type { ProjectConfigInput, SandboxConfigInput } from '../../sandbox/config';
import type { LedgerEntry } from '../../sandbox/ledger';
import { generateTestKeys, type TestKeys } from './keys';
import { stateImage, storedImage } from './sandbox-image';

/*
 * A sandbox for tests on 127.0.0.1:0 with fresh keys, plus a small signed-request client built on undici
 * and node:crypto (independent of the partner's provider client on purpose).
 *
 * In memory by default. PAYSAGA_SANDBOX_STORE_CHECK=1 runs every test sandbox on a data folder instead
 * (SQLite) and checks on close that the file gives back exactly the state the sandbox had, so any
 * change that does not reach the store fails the test that made it:
 *   PAYSAGA_SANDBOX_STORE_CHECK=1 npx jest test/sandbox
 */
const STORE_CHECK = process.env.PAYSAGA_SANDBOX_STORE_CHECK === '1';

/* eslint-disable @typescript-eslint/no-explicit-any -- responses are inspected field by field in tests */

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

export interface SignedRequestOptions {
  idempotencyKey?: string;
  /** X-Project-Id (default: the first project) */
  projectId?: string;
  /** signing key (default: the partner private key of the test keys) */
  key?: KeyObject;
  /** exact body bytes to send instead of JSON.stringify(body) */
  raw?: string | Buffer;
  /** false: no signature header */
  sign?: boolean;
  /** use X-PARTNER-PROJECT / X-PARTNER-SIGN */
  legacyHeaders?: boolean;
  headers?: Record<string, string>;
}

export interface TestSandboxOptions {
  projects?: Partial<ProjectConfigInput>[];
  timeScale?: number;
  qrTtlSeconds?: number;
  webhookUrl?: string;
  /** any other config field (stepMs, processingMs, registeredFpsPhones, faults, ...) */
  config?: Partial<SandboxConfigInput>;
  /** keys to use (default: fresh ones); a restart test passes the first run's */
  keys?: TestKeys;
  /** keep the state in this folder (SQLite) instead of memory */
  dataDir?: string;
  /** port to listen on (default: a free one) */
  port?: number;
}

/** Requests to a sandbox at `url`, signed as the partner of `keys`, for project `projectId` by default. */
export interface SandboxClient {
  /** signed request to /api/v1/<path> */
  post(path: string, body?: unknown, opts?: SignedRequestOptions): Promise<ApiResponse>;
  /** signed GET with the empty JSON body (sbp/banks) */
  get(path: string, opts?: SignedRequestOptions): Promise<ApiResponse>;
  /** unsigned request to a /sandbox route or any other path of the sandbox */
  plain(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<ApiResponse>;
  ledger(sessionId?: string): Promise<{ entries: LedgerEntry[]; totals: Record<string, number> }>;
  stats(): Promise<{ stats: Record<string, number>; next_ids: Record<string, number> }>;
  /** polls transaction/state until `predicate` holds */
  waitForSession(
    sessionId: string,
    predicate: (session: any) => boolean,
    opts?: { timeoutMs?: number; projectId?: string },
  ): Promise<any>;
}

export interface TestSandbox extends SandboxClient {
  url: string;
  keys: TestKeys;
  projectId: string;
  projectIds: string[];
  sandbox: RunningSandbox;
  close(): Promise<void>;
}

/** The text parsed as JSON, or undefined when it is not JSON (answers are inspected either way). */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function send(
  method: string,
  url: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
): Promise<ApiResponse> {
  const res = await request(url, {
    method: method as 'GET',
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    headers: res.headers as ApiResponse['headers'],
    body: jsonOrUndefined(text),
    text,
  };
}

export async function startTestSandbox(opts: TestSandboxOptions = {}): Promise<TestSandbox> {
  const keys = opts.keys ?? generateTestKeys();
  const projects = (opts.projects ?? [{}]).map((p, i) => ({
    id: `proj_${i + 1}`,
    publicKey: keys.partner.publicPem,
    ...(opts.webhookUrl ? { webhookUrl: opts.webhookUrl } : {}),
    ...p,
  }));
  const checkDir =
    STORE_CHECK && !opts.dataDir
      ? fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-sandbox-store-'))
      : undefined;
  const dataDir = opts.dataDir ?? checkDir;
  const sandbox = await startSandbox(
    {
      serviceKey: keys.service.privatePem,
      projects,
      timeScale: opts.timeScale ?? 0.01,
      ...(opts.qrTtlSeconds !== undefined ? { qrTtlSeconds: opts.qrTtlSeconds } : {}),
      ...opts.config,
    },
    { ...(dataDir ? { dataDir } : {}), ...(opts.port !== undefined ? { port: opts.port } : {}) },
  );
  const projectIds = projects.map((p) => p.id);
  const projectId = projectIds[0]!;
  return {
    ...sandboxClient(sandbox.url, keys, projectId),
    url: sandbox.url,
    keys,
    projectId,
    projectIds,
    sandbox,
    close: async () => {
      await sandbox.close();
      if (checkDir) checkStoredState(sandbox, checkDir);
    },
  };
}

export function sandboxClient(url: string, keys: TestKeys, projectId: string): SandboxClient {
  const signed = (method: 'GET' | 'POST', path: string, body: unknown, o: SignedRequestOptions = {}) => {
    const bytes = o.raw !== undefined ? Buffer.from(o.raw) : Buffer.from(JSON.stringify(body ?? {}));
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    headers[o.legacyHeaders ? 'x-partner-project' : 'x-project-id'] = o.projectId ?? projectId;
    if (o.sign !== false)
      headers[o.legacyHeaders ? 'x-partner-sign' : 'x-signature'] = sign(
        'sha256',
        bytes,
        o.key ?? keys.partner.privateKey,
      ).toString('base64');
    if (o.idempotencyKey !== undefined) headers['x-partner-idempotency-key'] = o.idempotencyKey;
    Object.assign(headers, o.headers);
    return send(method, `${url}/api/v1/${path.replace(/^\/+/, '')}`, headers, bytes);
  };

  const plain: TestSandbox['plain'] = (method, path, body, headers = {}) => {
    const bytes =
      body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const h =
      bytes && !headers['content-type'] ? { 'content-type': 'application/json', ...headers } : headers;
    return send(method, `${url}${path}`, h, bytes);
  };

  const post: TestSandbox['post'] = (path, body, o) => signed('POST', path, body, o);

  return {
    post,
    get: (path, o) => signed('GET', path, {}, o),
    plain,
    async ledger(sessionId) {
      const res = await plain(
        'GET',
        `/sandbox/ledger${sessionId ? `?session_id=${encodeURIComponent(sessionId)}` : ''}`,
      );
      return res.body;
    },
    async stats() {
      return (await plain('GET', '/sandbox/stats')).body;
    },
    async waitForSession(sessionId, predicate, o = {}) {
      const deadline = Date.now() + (o.timeoutMs ?? 10_000);
      let last: any;
      for (;;) {
        const res = await post(
          'transaction/state',
          { session_id: sessionId },
          o.projectId ? { projectId: o.projectId } : {},
        );
        last = res.body?.session_info;
        if (last && predicate(last)) return last;
        if (Date.now() > deadline)
          throw new Error(
            `session ${sessionId} did not reach the expected state; last: ${JSON.stringify(last)}`,
          );
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

/** PAYSAGA_SANDBOX_STORE_CHECK: the closed sandbox's file must give back the state it had. */
function checkStoredState(sandbox: RunningSandbox, dataDir: string): void {
  try {
    const live = stateImage(sandbox.state);
    const {
      jobs: _jobs,
      deliveries: _deliveries,
      ...stored
    } = storedImage(path.join(dataDir, SANDBOX_STORE_FILE));
    // No id taken: nothing stored, the counters are still the fresh base.
    if (stored.nextIds === null) stored.nextIds = live.nextIds;
    for (const key of Object.keys(live) as (keyof typeof live)[])
      if (!isDeepStrictEqual(live[key], stored[key]))
        throw new Error(
          `sandbox store check: ${key} differs after a reload\n live:   ${JSON.stringify(live[key]).slice(0, 2000)}\n stored: ${JSON.stringify(stored[key]).slice(0, 2000)}`,
        );
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
