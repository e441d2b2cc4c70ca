/**
 * `paysaga keys generate`: through its commander registration (as the CLI runs it, but without the other
 * subcommands so their state cannot break this test) and through the function.
 */
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateKeys, KEY_FILES, KeysExistError } from '../../cli/keys';
import { Command } from 'commander';
import { register as registerKeys } from '../../cli/commands/keys';

let tmp: string;

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-keys-'));
});

afterEach(() => {
  jest.restoreAllMocks();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function mode(file: string): number {
  return fs.statSync(file).mode & 0o777;
}

async function runCli(...args: string[]): Promise<void> {
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
  const program = new Command('paysaga').exitOverride();
  registerKeys(program);
  await program.parseAsync(args, { from: 'user' });
}

describe('paysaga keys generate', () => {
  test('writes two RSA-2048 PEM key pairs with safe modes, usable for sign/verify', async () => {
    const out = path.join(tmp, 'nested', 'keys');
    await runCli('keys', 'generate', '--out', out);

    expect(mode(out)).toBe(0o700);
    expect(fs.readdirSync(out).sort()).toEqual(Object.values(KEY_FILES).sort());

    for (const who of ['partner', 'service']) {
      const privatePem = fs.readFileSync(path.join(out, `${who}_private.pem`), 'utf8');
      const publicPem = fs.readFileSync(path.join(out, `${who}_public.pem`), 'utf8');
      expect(mode(path.join(out, `${who}_private.pem`))).toBe(0o600);
      expect(mode(path.join(out, `${who}_public.pem`))).toBe(0o644);
      expect(privatePem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/); // PKCS#8
      expect(publicPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/); // SPKI

      const privateKey = createPrivateKey(privatePem);
      const publicKey = createPublicKey(publicPem);
      expect(privateKey.asymmetricKeyType).toBe('rsa');
      expect(privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
      expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);

      const message = Buffer.from(`{"amount":1000,"who":"${who}"}`);
      const signature = sign('sha256', message, privateKey);
      expect(verify('sha256', message, publicKey, signature)).toBe(true);
      expect(verify('sha256', Buffer.from('tampered'), publicKey, signature)).toBe(false);
    }

    // the two pairs are distinct
    const partnerPub = fs.readFileSync(path.join(out, KEY_FILES.partnerPublic), 'utf8');
    const servicePub = fs.readFileSync(path.join(out, KEY_FILES.servicePublic), 'utf8');
    expect(partnerPub).not.toBe(servicePub);
  });

  test('--if-missing leaves existing keys alone, and writes them where there are none', async () => {
    const out = path.join(tmp, 'keys');
    await runCli('keys', 'generate', '--out', out, '--if-missing');
    const before = fs.readFileSync(path.join(out, KEY_FILES.partnerPrivate), 'utf8');
    await runCli('keys', 'generate', '--out', out, '--if-missing');
    expect(fs.readFileSync(path.join(out, KEY_FILES.partnerPrivate), 'utf8')).toBe(before);
    // Half a set is not "present": refused as without the flag, nothing is replaced.
    fs.rmSync(path.join(out, KEY_FILES.servicePublic));
    await expect(runCli('keys', 'generate', '--out', out, '--if-missing')).rejects.toThrow(
      new Error(
        `refusing to overwrite existing key files (use --force to replace them): ${['partner_private', 'partner_public', 'service_private'].map((k) => path.join(out, `${k}.pem`)).join(', ')}`,
      ),
    );
    expect(fs.readFileSync(path.join(out, KEY_FILES.partnerPrivate), 'utf8')).toBe(before);
  });

  test('refuses to overwrite existing keys unless --force', async () => {
    const out = path.join(tmp, 'keys');
    await runCli('keys', 'generate', '--out', out);
    const before = fs.readFileSync(path.join(out, KEY_FILES.partnerPrivate), 'utf8');

    await expect(runCli('keys', 'generate', '--out', out)).rejects.toThrow(
      new Error(
        `refusing to overwrite existing key files (use --force to replace them): ${['partner_private', 'partner_public', 'service_private', 'service_public'].map((k) => path.join(out, `${k}.pem`)).join(', ')}`,
      ),
    );
    await expect(generateKeys({ outDir: out })).rejects.toBeInstanceOf(KeysExistError);
    expect(fs.readFileSync(path.join(out, KEY_FILES.partnerPrivate), 'utf8')).toBe(before);

    // a single existing file is enough to refuse, and nothing else gets written
    const lonely = path.join(tmp, 'lonely');
    fs.mkdirSync(lonely);
    fs.writeFileSync(path.join(lonely, KEY_FILES.servicePublic), 'mine');
    await expect(generateKeys({ outDir: lonely })).rejects.toThrow(KEY_FILES.servicePublic);
    expect(fs.readdirSync(lonely)).toEqual([KEY_FILES.servicePublic]);

    fs.chmodSync(path.join(out, KEY_FILES.partnerPrivate), 0o666);
    await runCli('keys', 'generate', '--out', out, '--force');
    expect(fs.readFileSync(path.join(out, KEY_FILES.partnerPrivate), 'utf8')).not.toBe(before);
    expect(mode(path.join(out, KEY_FILES.partnerPrivate))).toBe(0o600);
  });

  test('an existing directory keeps its mode, with a warning if it is open to others', async () => {
    const out = path.join(tmp, 'shared');
    fs.mkdirSync(out);
    fs.chmodSync(out, 0o755);
    const result = await generateKeys({ outDir: out });
    expect(mode(out)).toBe(0o755);
    expect(result.warning).toMatch(/accessible by group\/others/);
  });
});
