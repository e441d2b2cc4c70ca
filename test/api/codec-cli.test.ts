/**
 * The real Temporal CLI (the pinned binary of `.tools/`, as cli/temporal-cli.ts resolves it) reads an
 * encrypted session through the API's codec server on the internal listener: `temporal workflow query`
 * posts `{}` to /codec/encode (a query without arguments has no payloads), then decodes the answer.
 * Without the codec token the codec refuses it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { resolveTemporalCli } from '../../cli/temporal-cli';
import { EncryptionCodec, generateCodecKeySpec, parseCodecKeys } from '../../platform/codec';
import { testAddress, testNamespace } from '../helpers/temporal';
import { card, finished, FRICTIONLESS, ref, rub, useApiStack } from './api-stack';

jest.setTimeout(90_000);

const run = promisify(execFile);
const codec = new EncryptionCodec(parseCodecKeys(generateCodecKeySpec('cli1')));
const s = useApiStack({ codec, api: { codec, codecTokens: ['staff-token'] } });

async function temporal(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const cli = resolveTemporalCli().path;
  if (!cli) throw new Error('no Temporal CLI: run `npm run setup`');
  try {
    const { stdout, stderr } = await run(
      cli,
      [
        ...args,
        '--address',
        testAddress(),
        '--namespace',
        testNamespace(),
        '--disable-config-file',
        '--disable-config-env',
        '--command-timeout',
        '30s',
        '--color',
        'never',
      ],
      { timeout: 45_000, env: { PATH: process.env.PATH ?? '' } },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('the Temporal CLI through the codec endpoint', () => {
  let sessionId: string;
  beforeAll(async () => {
    const res = await s.call('POST', '/v1/checkouts?wait=15000', {
      body: {
        method: 'card',
        reference: ref('cli'),
        amount: rub(700),
        card: card(FRICTIONLESS),
        customer: { user_id: 'u1' },
      },
    });
    expect(res.status).toBe(201);
    sessionId = res.body.sessionId;
    expect((await finished(s, sessionId)).phase).toBe('succeeded');
  });

  const query = (extra: string[]) =>
    temporal([
      'workflow',
      'query',
      '--workflow-id',
      sessionId,
      '--name',
      'session',
      '--output',
      'json',
      ...extra,
    ]);

  it('workflow query --codec-endpoint --codec-auth: the decoded session', async () => {
    const res = await query([
      '--codec-endpoint',
      `${s.internalUrl}/codec`,
      '--codec-auth',
      'Bearer staff-token',
    ]);
    expect(res).toMatchObject({ code: 0 });
    const out = JSON.parse(res.stdout) as {
      queryResult: [{ sessionId: string; phase: string; kind: string }];
    };
    expect(out.queryResult[0]).toMatchObject({ sessionId, phase: 'succeeded', kind: 'card_checkout' });
  });

  it('without the codec the answer stays encrypted; without the token the codec refuses', async () => {
    const plain = await query([]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain('card_checkout');
    const encoding = JSON.parse(plain.stdout).queryResult.payloads[0].metadata.encoding as string;
    expect(Buffer.from(encoding, 'base64').toString()).toBe('binary/encrypted');
    const refused = await query(['--codec-endpoint', `${s.internalUrl}/codec`]);
    expect(refused.code).not.toBe(0);
    // The Temporal CLI (pinned) says the API's error envelope as it came.
    expect(refused.stderr).toBe(
      'Error: querying workflow failed: Unauthorized: {"error":{"code":"unauthorized","message":"the codec needs a codec token","retryable":false}}\n',
    );
  });

  it('the codec is not on the public listener', async () => {
    const res = await query([
      '--codec-endpoint',
      `${s.publicUrl}/codec`,
      '--codec-auth',
      'Bearer staff-token',
    ]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toBe(
      'Error: querying workflow failed: Not Found: {"error":{"code":"not_found","message":"no route POST /codec/encode","retryable":false}}\n',
    );
  });
});
