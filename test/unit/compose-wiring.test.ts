/**
 * docker-compose.yml wires the API the way the code expects: the API's own configuration checks accept
 * its environment (the codec is protected off loopback, the return page is bound), and the sandbox's
 * webhooks, payers' returns, the health check and the UI's codec reach the listener that serves them.
 * No Docker engine here: the file is read as YAML with its variables filled from .env.example.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { listenConfigFromEnv } from '../../api/listen-config';
import { assertCodecProtected } from '../../api/listeners';
import { storeConfigFromEnv } from '../../store/config';

const ROOT = path.resolve(__dirname, '../..');

interface Service {
  environment?: Record<string, string>;
  ports?: string[];
  networks?: string[];
  command?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}

/** .env.example with every placeholder replaced by a value long enough for any secret. */
function exampleEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8').split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2] === 'CHANGE-ME' ? `${m[1]!.toLowerCase()}-0123456789abcdef` : m[2]!;
  }
  return env;
}

/** Compose's interpolation of the forms the file uses: ${X}, ${X:-default}, ${X:?message}, $$. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (all, name, op, arg) => {
    if (all === '$$') return '$';
    const value = env[name as string];
    if (value) return value;
    if (op === '?') throw new Error(`${name as string} unset: ${arg as string}`);
    return op === '-' ? (arg as string) : '';
  });
}

function composeServices(): Record<string, Service> {
  const text = interpolate(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), exampleEnv());
  return (YAML.parse(text, { merge: true, maxAliasCount: -1 }) as { services: Record<string, Service> })
    .services;
}

/** "127.0.0.1:8080:8081" -> host port 8080 for container port 8081. */
function hostPortFor(service: Service, containerPort: number): number | undefined {
  for (const p of service.ports ?? []) {
    const parts = p.split(':');
    if (Number(parts[parts.length - 1]) === containerPort) return Number(parts[parts.length - 2]);
  }
  return undefined;
}

const list = (v: string | undefined) => (v ?? '').split(',').filter(Boolean);

describe('docker-compose.yml wiring', () => {
  const services = composeServices();
  const api = services.api!;
  const apiEnv = api.environment!;
  const listen = listenConfigFromEnv(apiEnv);

  test("the API's environment passes its own checks: listeners, bound returns, a protected codec", () => {
    expect(apiEnv.PAYSAGA_API_PORT).toBeUndefined();
    expect(apiEnv.PAYSAGA_API_HOST).toBeUndefined();
    expect(listen.public.host).toBe('0.0.0.0');
    expect(listen.publicUrl).toBeDefined();
    expect(listen.returnSecrets.length).toBeGreaterThan(0);
    expect(apiEnv.PAYSAGA_CODEC_KEYS).toBeTruthy();
    expect(() =>
      assertCodecProtected({
        codec: true,
        tokens: list(apiEnv.PAYSAGA_CODEC_TOKENS),
        host: listen.internal.host,
      }),
    ).not.toThrow();
  });

  test('payers and the sandbox reach the public listener; the health check the internal one', () => {
    const publicUrl = new URL(listen.publicUrl!);
    expect(Number(publicUrl.port)).toBe(hostPortFor(api, listen.public.port));
    const sandboxConfig = JSON.parse(fs.readFileSync(path.join(ROOT, 'deploy/sandbox.json'), 'utf8')) as {
      projects: { webhookUrl: string }[];
    };
    for (const project of sandboxConfig.projects)
      expect(project.webhookUrl).toBe(`http://api:${listen.public.port}/webhooks/provider`);
    expect(services.sandbox!.command).toEqual(expect.arrayContaining(['--data']));
    expect(api.healthcheck!.test.join(' ')).toContain(`http://127.0.0.1:${listen.internal.port}/healthz`);
  });

  test("the UI's codec goes through the proxy, which adds the API's token and only the API shares its network", () => {
    const ui = services['temporal-ui']!;
    const proxy = services['codec-proxy']!;
    const endpoint = new URL(ui.environment!.TEMPORAL_CODEC_ENDPOINT!);
    expect(endpoint.hostname).toBe('localhost');
    const template = fs.readFileSync(path.join(ROOT, 'deploy/codec-proxy.conf.template'), 'utf8');
    const listenPort = Number(/listen\s+(\d+);/.exec(template)![1]);
    expect(Number(endpoint.port)).toBe(hostPortFor(proxy, listenPort));
    expect(template).toContain(`http://api:${listen.internal.port}`);
    expect(template).toContain('proxy_set_header Authorization "Bearer ${CODEC_TOKEN}"');
    expect(list(apiEnv.PAYSAGA_CODEC_TOKENS)).toContain(proxy.environment!.CODEC_TOKEN);
    const uiOrigin = `http://localhost:${hostPortFor(ui, 8080)}`;
    expect(list(apiEnv.PAYSAGA_CODEC_CORS_ORIGINS)).toContain(uiOrigin);
    expect(proxy.networks).toEqual(['codec']);
    const onCodecNetwork = Object.entries(services)
      .filter(([, s]) => (s.networks ?? []).includes('codec'))
      .map(([name]) => name)
      .sort();
    expect(onCodecNetwork).toEqual(['api', 'codec-proxy']);
  });

  test('every paysaga process names one store: the database `paysaga` the compose job makes, on the PostgreSQL service, before setup migrates it', () => {
    const users = ['worker-1', 'worker-2', 'api', 'paysaga-setup'];
    const urls = new Set(users.map((name) => services[name]!.environment!.PAYSAGA_DATABASE_URL));
    expect(urls.size).toBe(1);
    const [url] = [...urls];
    const config = storeConfigFromEnv({ PAYSAGA_DATABASE_URL: url });
    expect(config?.schema).toBe('paysaga');
    const parsed = new URL(config!.url);
    expect(parsed.hostname).toBe('postgresql');
    expect(parsed.pathname).toBe('/paysaga');
    expect(parsed.username).toBe('paysaga');
    expect(decodeURIComponent(parsed.password)).toBe(exampleEnv().PAYSAGA_DATABASE_PASSWORD);
    const job = services['paysaga-database']!;
    const script = job.command!.join('\n');
    expect(script).toContain('CREATE ROLE paysaga LOGIN');
    expect(script).toContain('CREATE DATABASE paysaga OWNER paysaga');
    expect(job.environment!.PGHOST).toBe('postgresql');
    expect(job.environment!.PAYSAGA_DATABASE_PASSWORD).toBe(exampleEnv().PAYSAGA_DATABASE_PASSWORD);
    expect(services['paysaga-setup']!.depends_on!['paysaga-database']).toEqual({
      condition: 'service_completed_successfully',
    });
    for (const name of ['worker-1', 'worker-2', 'api'])
      expect(services[name]!.depends_on!['paysaga-setup']).toEqual({
        condition: 'service_completed_successfully',
      });
  });
});
