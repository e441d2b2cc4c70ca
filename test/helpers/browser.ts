/**
 * What the real-browser tests (test/browser/) share: `paysaga dev` run in-process (runDev) on a temp
 * data folder and free ports, with its own Temporal dev server and UI (the worker uses the workflow
 * bundle of the test run), a headless Chromium via playwright-core, the screenshot folder
 * (test-results/screenshots/) and small calls to the API it serves.
 */
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { runDev } from '../../cli/commands/dev';
import { sharedWorkflowBundlePath } from './temporal';
import { testStoreEnv } from './store';

export const CHROMIUM = process.env.PAYSAGA_CHROMIUM_PATH || '/usr/bin/chromium';
export const SCREENSHOTS = path.resolve(__dirname, '../../test-results/screenshots');

/* eslint-disable @typescript-eslint/no-explicit-any -- API answers are read field by field */

export interface Dev {
  signals: EventEmitter;
  done: Promise<void>;
  out: string[];
  err: string[];
  /** Where /v1 is served (the internal listener). */
  apiUrl: string;
  /** The public listener: webhooks and the payer's return page. */
  publicUrl: string;
  uiUrl: string;
  sandboxUrl: string;
  temporalAddress: string;
  token: string;
}

export interface BrowserStack {
  dev: Dev;
  browser: Browser;
  /** A bearer call to the dev API; throws on a status of 300 or more. */
  api(method: 'GET' | 'POST', url: string, body?: unknown): Promise<any>;
  /** Reads GET /v1/sessions/{id} until `done` holds (or throws after `ms`). */
  until(sessionId: string, done: (v: any) => boolean, ms?: number): Promise<any>;
  /** Closes the browser, stops the dev stack and removes its data folder. */
  close(): Promise<void>;
}

export const FINAL_PHASES = ['succeeded', 'failed', 'canceled'];

function bannerField(lines: string[], name: string): string {
  // `  Temporal UI  http://...` and `  Temporal     127.0.0.1:...`: the name, then two spaces or more.
  const pattern = new RegExp(`^  ${name}\\s{2,}(\\S+)`);
  for (const line of lines) {
    const m = pattern.exec(line);
    if (m) return m[1]!;
  }
  throw new Error(`no "${name}" in the dev banner:\n${lines.join('\n')}`);
}

async function startDev(dataDir: string): Promise<Dev> {
  const signals = new EventEmitter();
  const out: string[] = [];
  const err: string[] = [];
  let failed: unknown;
  const done = runDev(
    {
      data: dataDir,
      host: '127.0.0.1',
      publicPort: '0',
      internalPort: '0',
      sandboxPort: '0',
      temporalPort: '0',
      temporalUiPort: '0',
      logLevel: 'warn',
    },
    {
      signals,
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      // The run's embedded store (a schema of its own): PGlite itself cannot start inside jest's VM.
      env: { ...process.env, PAYSAGA_WORKFLOW_BUNDLE: sharedWorkflowBundlePath(), ...testStoreEnv() },
      exit: () => undefined,
    },
  ).catch((e: unknown) => {
    failed = e;
  });
  const deadline = Date.now() + 90_000;
  while (!out.some((l) => l.startsWith('Ctrl-C stops everything'))) {
    if (failed) throw failed;
    if (Date.now() > deadline) {
      // The first SIGINT stops everything, also during start.
      signals.emit('SIGINT');
      await done;
      throw new Error(`paysaga dev did not come up:\n${out.join('\n')}\n${err.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    signals,
    done,
    out,
    err,
    apiUrl: bannerField(out, 'API'),
    publicUrl: bannerField(out, 'Public'),
    uiUrl: bannerField(out, 'Temporal UI'),
    sandboxUrl: bannerField(out, 'Sandbox'),
    temporalAddress: bannerField(out, 'Temporal'),
    token: bannerField(out, 'API token'),
  };
}

/**
 * Fails first when Chromium is missing (the browser tests need it), then starts the dev stack and the
 * browser. On a failure half way, what was started is stopped before the error is thrown.
 */
export async function startBrowserStack(): Promise<BrowserStack> {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) or set PAYSAGA_CHROMIUM_PATH`,
    );
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-browser-'));
  let dev: Dev | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    if (dev) {
      dev.signals.emit('SIGINT');
      await dev.done;
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    dev = await startDev(dataDir);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
  } catch (e) {
    await close();
    throw e;
  }
  const d = dev;

  async function api(method: 'GET' | 'POST', url: string, body?: unknown): Promise<any> {
    const res = await fetch(`${d.apiUrl}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${d.token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const json = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  async function until(sessionId: string, done: (v: any) => boolean, ms = 30_000): Promise<any> {
    const deadline = Date.now() + ms;
    let view = await api('GET', `/v1/sessions/${sessionId}`);
    while (!done(view)) {
      if (Date.now() > deadline) throw new Error(`session ${sessionId} is still ${view.phase}`);
      await new Promise((r) => setTimeout(r, 300));
      view = await api('GET', `/v1/sessions/${sessionId}`);
    }
    return view;
  }

  return { dev: d, browser, api, until, close };
}
