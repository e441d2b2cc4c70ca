/**
 * scripts/check-deploy.js (run by CI): the compose file's paysaga variables must be ones paysaga reads,
 * and the Dockerfile must copy every source folder. The real files pass; made-up mistakes are named.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const check = require('../../scripts/check-deploy.js') as {
  checkComposeEnv(root: string, text: string): { problems: string[]; services: number; variables: number };
  checkDockerfile(root: string): string[];
};

const ROOT = path.resolve(__dirname, '../..');

const compose = (services: string) => `services:\n${services}`;

describe('docker-compose.yml variables', () => {
  test('the real file passes, with every paysaga service counted', () => {
    const result = check.checkComposeEnv(
      ROOT,
      fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'),
    );
    expect(result.problems).toEqual([]);
    // keys, setup, sandbox, two workers, API
    expect(result.services).toBe(6);
    expect(result.variables).toBeGreaterThan(30);
  });

  test('a variable paysaga does not read is named with its service; other images are not checked', () => {
    const text = compose(
      [
        '  api:',
        '    image: paysaga:local',
        '    environment:',
        '      PAYSAGA_API_TOKENS: t',
        '      PAYSAGA_API_TOKEN_LIST: t',
        '      TEMPORAL_TLS_SERVER_CA_CERT_PATH: /ca.pem',
        '      TEMPORAL_GRPC_META_X_TENANT: shop',
        '  worker:',
        '    build: .',
        '    environment:',
        '      - PAYSAGA_CODEC_KEY=k',
        '      - TEMPORAL_NAMESPACE',
        '  temporal:',
        '    image: temporalio/server:1.32.0',
        '    environment:',
        '      POSTGRES_SEEDS: postgresql',
      ].join('\n'),
    );
    expect(check.checkComposeEnv(ROOT, text).problems).toEqual([
      'docker-compose.yml: service api sets PAYSAGA_API_TOKEN_LIST, which paysaga does not read',
      'docker-compose.yml: service worker sets PAYSAGA_CODEC_KEY, which paysaga does not read',
    ]);
  });

  test('the listener and return variables are read; the retired one-listener ones are named', () => {
    const listenerVariables = [
      'PAYSAGA_PUBLIC_HOST',
      'PAYSAGA_PUBLIC_PORT',
      'PAYSAGA_INTERNAL_HOST',
      'PAYSAGA_INTERNAL_PORT',
      'PAYSAGA_V1_LISTENER',
      'PAYSAGA_PUBLIC_URL',
      'PAYSAGA_RETURN_SECRETS',
      'PAYSAGA_CODEC_TOKENS',
      'PAYSAGA_CODEC_CORS_ORIGINS',
    ];
    const text = compose(
      [
        '  api:',
        '    image: paysaga:local',
        '    environment:',
        ...listenerVariables.map((n) => `      ${n}: x`),
        '      PAYSAGA_API_PORT: 8080',
        '      PAYSAGA_API_HOST: 0.0.0.0',
      ].join('\n'),
    );
    expect(check.checkComposeEnv(ROOT, text).problems).toEqual([
      'docker-compose.yml: service api sets PAYSAGA_API_PORT, which paysaga does not read',
      'docker-compose.yml: service api sets PAYSAGA_API_HOST, which paysaga does not read',
    ]);
  });
});

describe('Dockerfile', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'paysaga-check-deploy-'));
    fs.writeFileSync(path.join(tmp, 'tsconfig.build.json'), JSON.stringify({ include: ['common', 'api'] }));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('the real one copies every source folder', () => {
    expect(check.checkDockerfile(ROOT)).toEqual([]);
  });

  test('a source folder not copied, or kept out by .dockerignore, is named', () => {
    fs.writeFileSync(
      path.join(tmp, 'Dockerfile'),
      [
        'FROM node AS build',
        'COPY package.json package-lock.json ./',
        'COPY tsconfig.build.json ./',
        'COPY bin ./bin',
        'COPY common ./common',
        'FROM node',
        'COPY --from=build /app/dist ./dist',
      ].join('\n'),
    );
    fs.writeFileSync(path.join(tmp, '.dockerignore'), 'node_modules\ncommon/\n');
    expect(check.checkDockerfile(tmp)).toEqual([
      '.dockerignore: excludes common, which the image is built from',
      'Dockerfile: api is not copied into the build stage',
    ]);
  });
});
