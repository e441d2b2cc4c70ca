/**
 * The README's run command, end to end: `paysaga dev` started as a real process (bin/paysaga.js) on a
 * temp data folder with every port chosen free (0), then `paysaga demo` as a second process against it:
 * every session kind must end as expected through the HTTP API. Then Ctrl-C (SIGINT): the dev process
 * exits by itself and its Temporal dev server child is gone. A restart on the same folder reuses the
 * token and keys and still knows the sessions (SQLite), and a busy port is refused with a clear message.
 *
 * The dev stack runs its own Temporal dev server (not the shared test server): that is what it does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer, type Server } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEMO_KINDS } from '../../cli/dev/demo';
import { FREE_PORTS } from '../helpers/dev-process';

const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'paysaga.js');

// Each test has its own bound below (the first may include a cold `tsc` build of dist/).

interface Proc {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, PAYSAGA_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, out: () => out, err: () => err, exited };
}

/** Until `pattern` shows in stdout; fails early (with both streams) if the process exits first. */
async function waitForOutput(p: Proc, pattern: RegExp, ms: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = pattern.exec(p.out());
    if (m) return m;
    if (p.child.exitCode !== null || p.child.signalCode !== null || Date.now() > deadline) {
      throw new Error(
        `no ${pattern} in the output (exit ${p.child.exitCode ?? p.child.signalCode ?? 'none: timed out'})\n` +
          `--- stdout\n${p.out()}\n--- stderr (tail)\n${p.err().slice(-4000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie nobody reaped still answers signal 0; it is not running.
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

interface Stack {
  proc: Proc;
  apiUrl: string;
  publicUrl: string;
  internalUrl: string;
  uiUrl: string;
  token: string;
  temporalPid: number;
  banner: string;
}

async function startDev(dataDir: string): Promise<Stack> {
  const proc = run(['dev', '--data', dataDir, ...FREE_PORTS]);
  started.push(proc);
  // The first run after a source change rebuilds dist/ (tsc) before starting.
  await waitForOutput(proc, /Ctrl-C stops everything/, 170_000);
  const banner = proc.out();
  const field = (name: string) => {
    const m = new RegExp(`^  ${name}\\s+(\\S+)`, 'm').exec(banner);
    if (!m) throw new Error(`no "${name}" line in:\n${banner}`);
    return m[1]!;
  };
  const pid = /^ {2}Temporal\s+\S+\s+namespace \S+\s+pid (\d+)/m.exec(banner);
  return {
    proc,
    apiUrl: field('API'),
    publicUrl: field('Public'),
    internalUrl: field('Internal'),
    uiUrl: field('Temporal UI'),
    token: field('API token'),
    temporalPid: Number(pid?.[1]),
    banner,
  };
}

async function stopDev(s: Stack): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  s.proc.child.kill('SIGINT');
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(
      () => reject(new Error(`paysaga dev did not exit within 45 s of SIGINT\n${s.proc.err().slice(-3000)}`)),
      45_000,
    ).unref(),
  );
  return Promise.race([s.proc.exited, timeout]);
}

const started: Proc[] = [];
const temporalPids: number[] = [];
let dataDir: string;

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-dev-e2e-'));
});

afterAll(async () => {
  // Whatever a failed test left running: the dev processes, then their Temporal servers (own groups).
  for (const p of started)
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  for (const pid of temporalPids) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('paysaga dev + paysaga demo', () => {
  let stack: Stack;
  let demoSessions: { kind: string; sessionId?: string; ok: boolean }[] = [];

  it('dev comes up on free ports and prints the API, docs, token, Temporal UI and sandbox', async () => {
    stack = await startDev(dataDir);
    temporalPids.push(stack.temporalPid);
    expect(stack.temporalPid).toBeGreaterThan(0);
    expect(alive(stack.temporalPid)).toBe(true);
    expect(stack.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(stack.apiUrl).not.toBe('http://127.0.0.1:8081');
    // /v1, docs, health on the internal listener; the public one is another port.
    expect(stack.apiUrl).toBe(stack.internalUrl);
    expect(stack.publicUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(stack.publicUrl).not.toBe(stack.internalUrl);
    expect(stack.banner).toContain(`${stack.internalUrl}/docs`);
    expect(stack.banner).toMatch(/Sandbox\s+http:\/\/127\.0\.0\.1:\d+/);
    expect(stack.banner).toMatch(/paysaga demo --data/);
    expect(stack.token).toBe(fs.readFileSync(path.join(dataDir, 'api-token'), 'utf8').trim());
    expect(fs.statSync(path.join(dataDir, 'api-token')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(dataDir, 'return-secret')).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(path.join(dataDir, 'temporal.sqlite'))).toBe(true);
    expect(fs.readdirSync(path.join(dataDir, 'keys')).sort()).toEqual([
      'partner_private.pem',
      'partner_public.pem',
      'service_private.pem',
      'service_public.pem',
    ]);

    const health = await fetch(`${stack.internalUrl}/healthz`);
    expect(health.status).toBe(200);
    const docs = await fetch(`${stack.internalUrl}/docs`);
    expect(docs.status).toBeLessThan(400);
    expect((await fetch(`${stack.publicUrl}/healthz`)).status).toBe(404);
    const ui = await fetch(stack.uiUrl);
    expect(ui.status).toBe(200);
  }, 200_000);

  it('paysaga demo runs every session kind end to end and exits 0', async () => {
    const json = path.join(dataDir, 'demo.json');
    const demo = run(['demo', '--data', dataDir, '--json', json, '--timeout', '90']);
    started.push(demo);
    const { code } = await demo.exited;
    const output = demo.out();
    if (code !== 0) throw new Error(`demo exited ${code}\n${output}\n${demo.err()}`);
    expect(output).toMatch(/all \d+ kinds ended as expected/);

    const report = JSON.parse(fs.readFileSync(json, 'utf8')) as {
      apiUrl: string;
      results: { kind: string; sessionId?: string; ok: boolean; temporalUrl?: string }[];
    };
    expect(report.apiUrl).toBe(stack.apiUrl);
    expect(report.results.map((r) => r.kind).sort()).toEqual([...DEMO_KINDS].sort());
    for (const r of report.results) {
      expect({ kind: r.kind, ok: r.ok }).toEqual({ kind: r.kind, ok: true });
      expect(r.sessionId).toMatch(r.kind === 'subscription' ? /^sub-demo-/ : /^ps_/);
      expect(r.temporalUrl).toBe(`${stack.uiUrl}/namespaces/default/workflows/${r.sessionId}`);
      // The printed table has the same row.
      expect(output).toMatch(new RegExp(`^${r.kind}\\s+${r.sessionId}\\s+ok\\s`, 'm'));
    }
    demoSessions = report.results;

    // The sessions are real: the API reads them back from their workflows.
    const card = report.results.find((r) => r.kind === 'card')!;
    const res = await fetch(`${stack.apiUrl}/v1/sessions/${card.sessionId}`, {
      headers: { authorization: `Bearer ${stack.token}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { phase: string }).phase).toBe('succeeded');
  }, 150_000);

  it('SIGINT stops everything: the dev process exits and no Temporal server is left', async () => {
    const { code, signal } = await stopDev(stack);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const out = stack.proc.out();
    expect(out).toContain('paysaga dev stopped');
    // Stopped in order: API, worker, store, sandbox, then the Temporal server.
    const order = [...stack.proc.err().matchAll(/^dev: (.+) stopped$/gm)].map((m) => m[1]);
    expect(order).toEqual(['API', 'worker', 'store', 'sandbox', 'Temporal dev server']);
    expect(alive(stack.temporalPid)).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'dev.json'))).toBe(false);
    await expect(fetch(`${stack.internalUrl}/healthz`)).rejects.toThrow();
    await expect(fetch(`${stack.publicUrl}/webhooks/provider`)).rejects.toThrow();
  }, 60_000);

  it('a restart on the same data folder reuses token and keys and still knows the sessions', async () => {
    const keyBefore = fs.readFileSync(path.join(dataDir, 'keys', 'partner_public.pem'), 'utf8');
    const again = await startDev(dataDir);
    temporalPids.push(again.temporalPid);
    try {
      expect(again.token).toBe(stack.token);
      expect(again.banner).not.toMatch(/api-token, new/);
      expect(fs.readFileSync(path.join(dataDir, 'keys', 'partner_public.pem'), 'utf8')).toBe(keyBefore);
      const fps = demoSessions.find((r) => r.kind === 'fps')!;
      const res = await fetch(`${again.apiUrl}/v1/sessions/${fps.sessionId}`, {
        headers: { authorization: `Bearer ${again.token}` },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { phase: string }).phase).toBe('succeeded');
    } finally {
      const { code } = await stopDev(again);
      expect(code).toBe(0);
      expect(alive(again.temporalPid)).toBe(false);
    }
  }, 120_000);

  it('a busy port is refused before anything starts, naming the port and the flag', async () => {
    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    try {
      const p = run(['dev', '--data', dataDir, ...FREE_PORTS, '--public-port', String(port)]);
      started.push(p);
      const { code } = await p.exited;
      expect(code).toBe(1);
      expect(p.err()).toContain(`port ${port} (API public) on 127.0.0.1 is already in use`);
      expect(p.err()).toContain('--public-port or PAYSAGA_PUBLIC_PORT');
      expect(p.out()).not.toContain('starting the Temporal dev server');
    } finally {
      await new Promise<void>((r) => busy.close(() => r()));
    }
  }, 60_000);
});
