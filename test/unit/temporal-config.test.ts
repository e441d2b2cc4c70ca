/**
 * Temporal connection settings from the standard client configuration (platform/temporal-config.ts):
 * variables, profiles of a config file, paysaga's defaults and the mistakes refused before connecting.
 * The connection over TLS itself is proven in test/temporal/tls-connection.test.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  describeTemporalSettings,
  envForLocalTemporal,
  TemporalConfigError,
  temporalSettingsFromEnv,
} from '../../platform/temporal-config';
import { temporalConnectionOptions } from '../../platform/temporal-connection';
import { thrownBy } from '../helpers/thrown';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-temporal-config-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** An environment with no config file anywhere (HOME and XDG point into the empty temp folder). */
function env(vars: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { HOME: path.join(dir, 'home'), XDG_CONFIG_HOME: path.join(dir, 'xdg'), ...vars };
}

function writeFile(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

describe('temporalSettingsFromEnv', () => {
  test('nothing set: paysaga defaults, plaintext', () => {
    const s = temporalSettingsFromEnv(env());
    expect(s).toEqual({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'paysaga' });
    expect(temporalConnectionOptions(s)).toEqual({ address: '127.0.0.1:7233' });
    expect(describeTemporalSettings(s)).toBe('127.0.0.1:7233 namespace default, plaintext');
  });

  test('empty variables count as unset', () => {
    const s = temporalSettingsFromEnv(
      env({ TEMPORAL_ADDRESS: '', TEMPORAL_NAMESPACE: '', TEMPORAL_API_KEY: '', PAYSAGA_TASK_QUEUE: '' }),
    );
    expect(s).toEqual({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'paysaga' });
  });

  test('address, namespace, task queue and an API key (which turns TLS on)', () => {
    const s = temporalSettingsFromEnv(
      env({
        TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
        TEMPORAL_NAMESPACE: 'ns.acct',
        TEMPORAL_API_KEY: 'secret-key',
        PAYSAGA_TASK_QUEUE: 'payments',
      }),
    );
    expect(s).toEqual({
      address: 'ns.acct.tmprl.cloud:7233',
      namespace: 'ns.acct',
      taskQueue: 'payments',
      tls: true,
      apiKey: 'secret-key',
    });
    expect(temporalConnectionOptions(s)).toEqual({
      address: 'ns.acct.tmprl.cloud:7233',
      tls: true,
      apiKey: 'secret-key',
    });
    const described = describeTemporalSettings(s);
    expect(described).toBe('ns.acct.tmprl.cloud:7233 namespace ns.acct, TLS, API key');
    expect(described).not.toContain('secret-key');
  });

  test('TEMPORAL_TLS=false keeps an API key on plaintext (a proxy that terminates TLS)', () => {
    const s = temporalSettingsFromEnv(env({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'FALSE' }));
    expect(s.tls).toBe(false);
    expect(s.apiKey).toBe('k');
  });

  test('TLS and mTLS files from variables, as Buffers', () => {
    const ca = writeFile('ca.pem', 'CA PEM');
    const crt = writeFile('client.pem', 'CLIENT PEM');
    const key = writeFile('client.key', 'KEY PEM');
    const s = temporalSettingsFromEnv(
      env({
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca,
        TEMPORAL_TLS_CLIENT_CERT_PATH: crt,
        TEMPORAL_TLS_CLIENT_KEY_PATH: key,
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      }),
    );
    expect(s.tls).toEqual({
      serverNameOverride: 'temporal.internal',
      serverRootCACertificate: Buffer.from('CA PEM'),
      clientCertPair: { crt: Buffer.from('CLIENT PEM'), key: Buffer.from('KEY PEM') },
    });
    const tls = s.tls as { serverRootCACertificate: unknown };
    expect(Buffer.isBuffer(tls.serverRootCACertificate)).toBe(true);
    expect(describeTemporalSettings(s)).toBe(
      '127.0.0.1:7233 namespace default, TLS (own CA, server name temporal.internal, client certificate)',
    );
  });

  test('TEMPORAL_TLS=true alone: TLS with the system roots', () => {
    expect(temporalSettingsFromEnv(env({ TEMPORAL_TLS: '1' })).tls).toEqual({});
  });

  test('a profile of TEMPORAL_CONFIG_FILE chosen by TEMPORAL_PROFILE; variables override it', () => {
    const ca = writeFile('profile-ca.pem', 'PROFILE CA');
    const file = writeFile(
      'temporal.toml',
      [
        '[profile.default]',
        'address = "localhost:7233"',
        '',
        '[profile.prod]',
        'address = "temporal.prod:7233"',
        'namespace = "payments"',
        'api_key = "prod-key"',
        '[profile.prod.tls]',
        `server_ca_cert_path = "${ca}"`,
        '[profile.prod.grpc_meta]',
        'x-tenant = "shop"',
        '',
      ].join('\n'),
    );
    const prod = temporalSettingsFromEnv(env({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' }));
    expect(prod).toEqual({
      address: 'temporal.prod:7233',
      namespace: 'payments',
      taskQueue: 'paysaga',
      tls: { serverRootCACertificate: Buffer.from('PROFILE CA') },
      apiKey: 'prod-key',
      metadata: { 'x-tenant': 'shop' },
      profile: 'prod',
    });
    const overridden = temporalSettingsFromEnv(
      env({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod', TEMPORAL_NAMESPACE: 'other' }),
    );
    expect(overridden.namespace).toBe('other');
    expect(overridden.address).toBe('temporal.prod:7233');
    // No TEMPORAL_PROFILE: the `default` profile.
    expect(temporalSettingsFromEnv(env({ TEMPORAL_CONFIG_FILE: file })).address).toBe('localhost:7233');
  });

  test('the default file under XDG_CONFIG_HOME, and TEMPORAL_CONFIG_FILE= (empty) reads no file', () => {
    writeFile('xdg/temporalio/temporal.toml', '[profile.default]\naddress = "from-xdg:7233"\n');
    expect(temporalSettingsFromEnv(env()).address).toBe('from-xdg:7233');
    expect(temporalSettingsFromEnv(env({ TEMPORAL_CONFIG_FILE: '' })).address).toBe('127.0.0.1:7233');
    fs.rmSync(path.join(dir, 'xdg'), { recursive: true });
  });

  test('a config file without any profile (empty, or comments only) is no profile, as the Temporal CLI reads it', () => {
    for (const text of ['', '# profiles come later\n']) {
      const file = writeFile('no-profiles.toml', text);
      const settings = temporalSettingsFromEnv(
        env({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_ADDRESS: 'cluster:7233', TEMPORAL_NAMESPACE: 'ns' }),
      );
      expect([settings.address, settings.namespace, settings.tls]).toEqual(['cluster:7233', 'ns', undefined]);
      expect(() =>
        temporalSettingsFromEnv(env({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' })),
      ).toThrow(
        `Temporal connection settings (TEMPORAL_CONFIG_FILE=${file}, profile prod): Profile 'prod' not found: ${file} holds no profile`,
      );
    }
    // The default file, found by XDG_CONFIG_HOME, likewise.
    writeFile('xdg/temporalio/temporal.toml', '');
    expect(temporalSettingsFromEnv(env()).address).toBe('127.0.0.1:7233');
    fs.rmSync(path.join(dir, 'xdg'), { recursive: true });
  });

  test('mistakes are refused with the variable or profile named', () => {
    const file = writeFile('one.toml', '[profile.default]\naddress = "a:1"\n');
    const missingProfile = () =>
      temporalSettingsFromEnv(env({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nope' }));
    expect(missingProfile).toThrow(TemporalConfigError);
    expect(missingProfile).toThrow(
      `Temporal connection settings (TEMPORAL_CONFIG_FILE=${file}, profile nope): Profile 'nope' not found in config data`,
    );
    expect(() => temporalSettingsFromEnv(env({ TEMPORAL_TLS: 'yes' }))).toThrow(
      new Error('TEMPORAL_TLS must be one of 1, 0, true, false, got yes'),
    );
    expect(() => temporalSettingsFromEnv(env({ TEMPORAL_TLS_CLIENT_CERT_PATH: file }))).toThrow(
      new Error(
        'mTLS needs both TEMPORAL_TLS_CLIENT_CERT_PATH (or _DATA) and TEMPORAL_TLS_CLIENT_KEY_PATH (or _DATA)',
      ),
    );
    expect(() => temporalSettingsFromEnv(env({ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' }))).toThrow(
      new Error(
        'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported by the TypeScript SDK: set TEMPORAL_TLS_SERVER_NAME to a name the server certificate holds instead',
      ),
    );
    const missing = path.join(dir, 'missing.pem');
    const unreadable = thrownBy(() =>
      temporalSettingsFromEnv(env({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: missing })),
    );
    expect(unreadable.message).toBe(
      `Temporal connection settings: ENOENT: no such file or directory, open '${missing}'`,
    );
    expect((unreadable.cause as NodeJS.ErrnoException).code).toBe('ENOENT');
    const bad = writeFile('bad.toml', '[profile.default\n');
    expect(() => temporalSettingsFromEnv(env({ TEMPORAL_CONFIG_FILE: bad }))).toThrow(TemporalConfigError);
  });
});

describe('envForLocalTemporal (paysaga dev)', () => {
  test('a cluster configuration in the environment does not reach the embedded dev server', () => {
    const file = writeFile('cloud.toml', '[profile.cloud]\naddress = "x.tmprl.cloud:7233"\napi_key = "k"\n');
    const local = envForLocalTemporal(
      env({
        TEMPORAL_ADDRESS: 'x.tmprl.cloud:7233',
        TEMPORAL_API_KEY: 'k',
        TEMPORAL_TLS: 'true',
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/nowhere/ca.pem',
        TEMPORAL_GRPC_META_X_TENANT: 'shop',
        TEMPORAL_CONFIG_FILE: file,
        TEMPORAL_PROFILE: 'cloud',
        PAYSAGA_TASK_QUEUE: 'q',
      }),
      '127.0.0.1:7299',
      'dev',
    );
    expect(temporalSettingsFromEnv(local)).toEqual({
      address: '127.0.0.1:7299',
      namespace: 'dev',
      taskQueue: 'q',
    });
  });
});
