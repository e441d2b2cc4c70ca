/**
 * Restarting the dev stack while a 3-D Secure payment waits for the payer: `paysaga dev` (a real
 * process) gets a 3-D Secure card checkout through the API, is stopped with SIGTERM while the payer
 * has the challenge open, and is started again on the same data folder as another build (as after a
 * change to the workflow code: PAYSAGA_BUILD_ID stands for it). The session is pinned to the first
 * build: the second run says so and runs a worker of that build for it. The payer then passes the
 * challenge, the session succeeds on its own build, and the sandbox's ledger shows one hold and one
 * capture.
 *
 * The API's and the sandbox's ports are the same in both runs, as they are for `npm start` (8080, 8081,
 * 8090): the payer's challenge page and the signed return address the provider stored belong to them,
 * and the return page of the second run verifies the link the first run signed (the secret is kept in
 * the data folder).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { PaysagaApiClient, type Session } from '../../client/http';
import { firstForm, openPage } from '../../cli/dev/demo-http';
import { freePort } from '../../cli/dev/ports';
import { SANDBOX_STORE_FILE } from '../../sandbox/server';
import { killDevProcess, startDevProcess, stopDevProcess, type DevProcess } from '../helpers/dev-process';
import { runPaysaga } from '../helpers/cli-run';
import { TEST_CARD } from '../../sandbox/test-cards';

const HOST = '127.0.0.1';
const THREE_DS_CARD = {
  card_number: TEST_CARD.visa3ds,
  card_exp_month: '12',
  card_exp_year: '30',
  card_code: '123',
};
const AMOUNT = 77_700;
const FINAL = new Set(['succeeded', 'failed', 'canceled']);

let dataDir: string;
let args: string[];
const started: DevProcess[] = [];

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-dev-restart-'));
  // Three distinct free ports that both runs use: the API's public and internal listeners, the sandbox
  // (below the ephemeral range: no connection made between the two runs is given one as its local port).
  const ports: number[] = [];
  while (ports.length < 3) ports.push(await freePort(HOST, ports));
  const [publicPort, internalPort, sandbox] = ports as [number, number, number];
  args = [
    '--public-port',
    String(publicPort),
    '--internal-port',
    String(internalPort),
    '--sandbox-port',
    String(sandbox),
    '--temporal-port',
    '0',
    '--temporal-ui-port',
    '0',
  ];
});

afterAll(() => {
  for (const dev of started) killDevProcess(dev);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The environment without Temporal's variables, so `paysaga builds` finds the dev stack by its data folder. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_')));
}

async function until(
  api: PaysagaApiClient,
  id: string,
  what: string,
  done: (s: Session) => boolean,
  ms = 90_000,
): Promise<Session> {
  const deadline = Date.now() + ms;
  for (;;) {
    const view = await api.sessions.get(id);
    if (done(view)) return view;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}: ${JSON.stringify({ phase: view.phase, userAction: view.userAction })}`,
      );
    await new Promise((r) => setTimeout(r, 300));
  }
}

test('restarting the dev stack while 3-D Secure waits for the payer: the payer completes after the restart and the session succeeds', async () => {
  // --- first run: the checkout waits for the payer ---
  const first = await startDevProcess(dataDir, args);
  started.push(first);
  const api1 = new PaysagaApiClient({ baseUrl: first.apiUrl, token: first.token });
  let sessionId: string;
  let userAction: Session['userAction'];
  try {
    const created = await api1.checkouts.create({
      method: 'card',
      reference: `dev-restart-${randomBytes(4).toString('hex')}`,
      customer: { user_id: 'restart-payer' },
      amount: { amount: AMOUNT, currency: 'RUB' },
      card: THREE_DS_CARD,
    });
    sessionId = created.sessionId;
    const waiting = await until(
      api1,
      sessionId,
      'the 3-D Secure redirect',
      (v) => !!v.userAction || FINAL.has(v.phase),
    );
    expect(waiting.phase).not.toMatch(/succeeded|failed|canceled/);
    userAction = waiting.userAction;
    expect(userAction?.destination_info?.url_address).toContain(first.sandboxUrl);
  } finally {
    await api1.close();
  }
  const stopped = await stopDevProcess(first, 'SIGTERM');
  expect(stopped).toEqual({ code: 0, signal: null });
  expect(fs.existsSync(path.join(dataDir, SANDBOX_STORE_FILE))).toBe(true);

  // --- second run on the same folder, another build: the payer completes, the session succeeds ---
  const firstBuild = /^ {2}Build\s+(\S+)\s+\(current/m.exec(first.stdout())?.[1];
  expect(firstBuild).toMatch(/^[0-9a-f]{12}$/);
  const second = await startDevProcess(dataDir, args, { env: { PAYSAGA_BUILD_ID: 'changed-code' } });
  started.push(second);
  const api2 = new PaysagaApiClient({ baseUrl: second.apiUrl, token: second.token });
  try {
    expect(second.sandboxUrl).toBe(first.sandboxUrl);
    // The banner names the new build and the older one that still runs the waiting session.
    expect(second.stdout()).toMatch(/^ {2}Build\s+changed-code\s+\(current/m);
    // `paysaga builds` shows the new build current and the first one draining, with its session open.
    const builds = await runPaysaga(['builds', '--data', dataDir, '--json'], cleanEnv());
    expect(builds.code).toBe(0);
    const listed = JSON.parse(builds.stdout) as { buildId: string; status: string; open: number }[];
    expect(listed.find((b) => b.buildId === 'changed-code')?.status).toBe('current');
    expect(listed.find((b) => b.buildId === firstBuild)).toMatchObject({ status: 'draining' });
    expect(listed.find((b) => b.buildId === firstBuild)!.open).toBeGreaterThanOrEqual(1);
    // (The reconciler, pinned to it too, moves to the new build after its next pass.)
    expect(second.stdout()).toMatch(
      new RegExp(`Build ${firstBuild} {2}\\d+ open, pinned to it: a worker of that build runs them`),
    );
    const dest = userAction!.destination_info!;
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...dest.additional_params, ...dest.extra_params }))
      params[k] = String(v);
    const challenge = await openPage(dest.url_address, dest.http_method === 'POST' ? 'POST' : 'GET', params);
    expect(challenge.status).toBe(200); // the restarted sandbox still has the challenge open
    const form = firstForm(challenge.html, challenge.url);
    expect(form).toBeDefined();
    const submitted = await openPage(form!.action, form!.method === 'GET' ? 'GET' : 'POST', {
      ...form!.fields,
      code: '12345',
    });
    expect(submitted.status).toBeLessThan(400);
    // Back to back_url as the issuer's page says (a redirect or an auto-submitted form): the session's
    // return page that the first run signed, served by the second.
    const back = submitted.location
      ? { action: submitted.location, method: 'GET', fields: {} }
      : firstForm(submitted.html, submitted.url);
    expect(back?.action).toContain(`/return/${sessionId}?t=`);
    const returned = await openPage(back!.action, back!.method === 'GET' ? 'GET' : 'POST', back!.fields);
    expect(returned.status).toBe(200);
    expect(/data-outcome="([^"]+)"/.exec(returned.html)?.[1]).toMatch(/^(success|processing)$/);

    const done = await until(api2, sessionId, 'the result', (v) => FINAL.has(v.phase));
    expect(done.phase).toBe('succeeded');
    // On its own build, where it began.
    const address = /^ {2}Temporal\s+(\S+)\s+namespace/m.exec(second.stdout())![1]!;
    const connection = await Connection.connect({ address });
    try {
      const described = await new Client({ connection }).workflow.getHandle(sessionId).describe();
      expect(described.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId).toBe(
        firstBuild,
      );
    } finally {
      await connection.close();
    }

    const ledger = (await (
      await fetch(`${second.sandboxUrl}/sandbox/ledger?session_id=${encodeURIComponent(sessionId)}`)
    ).json()) as {
      entries: { kind: string; amount: number }[];
    };
    expect(ledger.entries.map((e) => [e.kind, e.amount])).toEqual([
      ['hold', AMOUNT],
      ['capture', AMOUNT],
    ]);
  } finally {
    await api2.close();
    const { code } = await stopDevProcess(second, 'SIGTERM');
    expect(code).toBe(0);
  }
}, 420_000);
