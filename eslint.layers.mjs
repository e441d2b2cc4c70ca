// The direction of imports between paysaga's top-level folders, enforced by eslint-plugin-boundaries
// (docs/architecture.md, "The layers", draws the same picture). Each folder is an element, and what may load
// a file is said by the folder it is in, never by a list of files:
//   provider/schemas/  the provider's wire contract (zod schemas, the card type they parse card fields
//                      into, the endpoint table the client and the sandbox share): loads nothing else;
//   common/            what workflow code may load: the domain's plain data, rules and views (no Node
//                      built-ins, no Temporal client; the rule in eslint.config.mjs checks that);
//   platform/          Node only: the payload codec, signatures and secrets, Temporal's configuration
//                      and connections, the outbound guard, and the calls to Temporal that both
//                      activities and the client make (session-runs).
// Anything not allowed below fails `npx eslint`; test/unit/layers.test.ts plants wrong imports to
// prove it, and that neither the folders nor the files form a cycle.
import boundaries from 'eslint-plugin-boundaries';

/** Top-level folders, bottom first. Tests, benchmarks and scripts are no element: they may import all. */
export const LAYERS = [
  'provider',
  'common',
  'platform',
  'sandbox',
  'store',
  'activities',
  'workflows',
  'client',
  'workers',
  'api',
  'cli',
];

/** Folders whose every file workflow code may load (eslint.config.mjs keeps Node out of them). */
export const WORKFLOW_SAFE = ['workflows', 'common', 'provider/schemas'];

const CONTRACT = 'provider/schemas/**';

/** An element of a layer, narrowed to files of a category (`{ noneOf: [...] }` for files outside it). */
const el = (type, categories) => ({ element: { type }, ...(categories ? { file: { categories } } : {}) });
const not = (category) => ({ noneOf: [category] });
const values = (...targets) => ({ to: targets });
const types = (...targets) => ({ to: targets, dependency: { kind: 'type' } });

/**
 * Who may import whom. Policies apply in order and a later one overrides an earlier one; what none allows
 * is an error. Type-only imports (`import type`) leave nothing in the JavaScript, so a few are allowed
 * where a value import is not.
 */
const policies = [
  // The provider's client imports nothing of ours; its wire contract imports nothing but itself.
  { from: el('provider'), allow: values(el('provider')) },
  { from: el('provider', 'contract'), disallow: values(el('provider', not('contract'))) },
  // The bottom of paysaga: what workflows may load; of the provider, only its wire contract.
  { from: el('common'), allow: values(el('common'), el('provider', 'contract')) },
  // Node's side of the shared code.
  { from: el('platform'), allow: values(el('platform'), el('common'), el('provider')) },
  // The emulated provider shares only the provider's wire contract, nothing of paysaga.
  { from: el('sandbox'), allow: values(el('sandbox'), el('provider', 'contract')) },
  // The store: PostgreSQL tables and typed queries over common's shapes; never loaded by workflow code.
  { from: el('store'), allow: values(el('store'), el('common'), el('provider', 'contract')) },
  { from: el('store'), allow: types(el('platform')) },
  {
    from: el('activities'),
    allow: values(el('activities'), el('store'), el('common'), el('platform'), el('provider')),
  },
  // Workflow code loads only workflow code and common/; activities and the provider's schemas it knows as
  // types.
  { from: el('workflows'), allow: values(el('workflows'), el('common')) },
  { from: el('workflows'), allow: types(el('activities'), el('provider', 'contract')) },
  // The client starts workflows by their types.
  {
    from: el('client'),
    allow: values(el('client'), el('store'), el('common'), el('platform'), el('provider')),
  },
  { from: el('client'), allow: types(el('workflows')) },
  {
    from: el('workers'),
    allow: values(
      el('workers'),
      el('store'),
      el('activities'),
      el('client'),
      el('workflows'),
      el('common'),
      el('platform'),
      el('provider'),
    ),
  },
  {
    from: el('api'),
    allow: values(el('api'), el('client'), el('store'), el('common'), el('platform'), el('provider')),
  },
  { from: el('cli'), allow: values(...LAYERS.map((layer) => el(layer))) },
];

export const layersConfig = {
  files: LAYERS.map((layer) => `${layer}/**`),
  plugins: { boundaries },
  settings: {
    'boundaries/elements': LAYERS.map((type) => ({ type, pattern: type, partialMatch: false })),
    'boundaries/files': [
      { category: 'contract', pattern: CONTRACT },
      // every file has a category, so that `noneOf` selects the files outside the others
      { category: 'file', pattern: '**/*' },
    ],
    'import/resolver': { node: { extensions: ['.ts', '.js'] } },
  },
  rules: {
    'boundaries/dependencies': ['error', { default: 'disallow', checkInternals: true, policies }],
  },
};
