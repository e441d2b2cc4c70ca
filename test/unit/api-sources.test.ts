/**
 * Rules of the API's code, checked by reading the sources:
 * - partner routes are registered from the HTTP client's route table (api/http.ts tableRoute), never by
 *   a path of their own, and every entry of the table is served;
 * - the session and subscription views are the zod schemas of common/views.ts, and no other answer,
 *   header or query is a hand-written JSON Schema in api/ either (events, endpoints, deliveries, health,
 *   the error envelope: common/views.ts and common/event-views.ts);
 * - no error is understood by matching its message;
 * - every state conflict code is a literal of one closed list (common/failures.ts), each listed in
 *   api/README.md, and none is built from a template.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { endpoints } from '../../client/http/endpoints';
import { STATE_CONFLICT_CODES } from '../../common/failures';

const ROOT = path.resolve(__dirname, '../..');
const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), 'utf8');
const tsFiles = (dir: string): string[] =>
  fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? tsFiles(path.join(dir, e.name))
        : e.name.endsWith('.ts')
          ? [path.join(dir, e.name)]
          : [],
    );

/** The route files registered under /v1 (api/app.ts v1Routes). */
function v1RouteFiles(): string[] {
  const app = read('api/app.ts');
  const body = /const v1Routes =[\s\S]*?\n {2}};/.exec(app)?.[0] ?? '';
  const plugins = [...body.matchAll(/v1\.register\((\w+)/g)]
    .map((m) => m[1]!)
    .filter((p) => p !== 'authPlugin');
  return plugins.map((plugin) => {
    const from = new RegExp(`import \\{[^}]*\\b${plugin}\\b[^}]*\\} from '\\./routes/([\\w-]+)'`).exec(app);
    if (!from) throw new Error(`no import of ${plugin} in api/app.ts`);
    return `api/routes/${from[1]}.ts`;
  });
}

describe('API sources', () => {
  const files = v1RouteFiles();

  it('finds the /v1 route files', () => {
    expect(files).toEqual(expect.arrayContaining(['api/routes/sessions.ts', 'api/routes/checkouts.ts']));
  });

  it.each(files)('%s registers routes only from the route table', (file) => {
    expect(read(file)).not.toMatch(/\b(app|v1)\.(get|post|put|patch|delete|route)\s*[(<]/);
  });

  it('every entry of the route table is registered by a /v1 route file', () => {
    const used = files.map(read).join('\n');
    const unserved = Object.keys(endpoints).filter((name) => !used.includes(`endpoints.${name},`));
    expect(unserved).toEqual([]);
  });

  it('the Session and Subscription schemas are generated from the zod views', () => {
    const schemas = read('api/schemas.ts');
    expect(schemas).toMatch(/resourceSchema\('Session', sessionView,/);
    expect(schemas).toMatch(/resourceSchema\('Subscription', subscriptionView,/);
    for (const file of tsFiles('api')) {
      // a hand-written view would spell the view's own fields as JSON Schema properties
      expect(read(file)).not.toMatch(/properties:\s*\{\s*sessionId:\s*\{\s*type:/);
    }
  });

  it('no JSON Schema in api/ is written by hand: each is generated from a zod schema (docSchema)', () => {
    const handWritten = tsFiles('api').filter((file) => /\btype:\s*'object'/.test(read(file)));
    expect(handWritten).toEqual([]);
    for (const file of ['api/routes/events.ts', 'api/routes/event-endpoints.ts', 'api/routes/health.ts'])
      expect(read(file)).toMatch(/docSchema\(\w+View\b/);
  });

  it('no error is understood by a regular expression over its message', () => {
    const offenders = [
      'api',
      'client',
      'common',
      'platform',
      'store',
      'activities',
      'workers',
      'workflows',
      'cli',
    ]
      .flatMap(tsFiles)
      .filter((file) =>
        /\.(test|exec|match)\(\s*\w*\.?message\b|\.message\)?\s*\.(match|matchAll)\(/.test(read(file)),
      );
    expect(offenders).toEqual([]);
  });

  it('every state conflict code is in api/README.md, and no code is built from a template', () => {
    const readme = read('api/README.md');
    expect(STATE_CONFLICT_CODES.filter((code) => !readme.includes(`\`${code}\``))).toEqual([]);
    // A code-shaped template (no spaces: `not_${what}able`) as a `code:` or inside a conflict's call.
    const codeTemplate = /`[a-z_]*\$\{[^}]+\}[a-z_]*`/;
    const calls = /(?:code:|[cC]onflict\(|SessionStateError\()[\s\S]*?(?:\);|,\n)/g;
    const templated = ['workflows', 'client', 'api', 'common']
      .flatMap(tsFiles)
      .filter((file) => (read(file).match(calls) ?? []).some((call) => codeTemplate.test(call)));
    expect(templated).toEqual([]);
  });
});
