// The direction of imports between paysaga's top-level folders, enforced by eslint-plugin-boundaries
// (README "What is where" and DESIGN "Layout" say the same in words). Each folder is an element; a few
// files carry a category that narrows what may reach them:
//   contract       the provider's wire contract: its zod schemas, the card type they parse card fields
//                  into (and its redaction), and the endpoint table the client and the sandbox share;
//   workflow-safe  files the workflow bundle may load: workflows/ and the common/ files listed below
//                  (no Node built-ins, no Temporal client; the rule in eslint.config.mjs checks that);
//   pure           the workflows/ files with no Temporal workflow API, read outside workflows too.
// Anything not allowed below fails `npx eslint`; test/unit/layers.test.ts plants wrong imports to
// prove it, and that the folders form no cycle.
import boundaries from 'eslint-plugin-boundaries';

/** Top-level folders, bottom first. Tests, benchmarks and scripts are no element: they may import all. */
export const LAYERS = [
  'provider',
  'common',
  'sandbox',
  'store',
  'activities',
  'workflows',
  'client',
  'workers',
  'api',
  'cli',
];

/** common/ files the workflow bundle may import; any other common/ file is for Node code only. */
export const WORKFLOW_SAFE_COMMON = [
  'billing-calendar',
  'event-delivery',
  'events',
  'failures',
  'json-bounds',
  'kinds',
  'message-schemas',
  'messages',
  'payouts',
  'reconciler',
  'search-attributes',
  'session-input',
  'settings',
  'snapshot',
  'steps',
  'subscription-input',
].map((name) => `common/${name}.ts`);

const CONTRACT = ['provider/schemas/**', 'provider/card.ts', 'provider/endpoints.ts'];
const PURE = ['workflows/session-view.ts'];

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
  // The bottom module: shared contracts; of the provider, only its wire contract.
  { from: el('common'), allow: values(el('common'), el('provider', 'contract')) },
  // Workflow-safe common files reach only workflow-safe files (the contract's card type uses node:util).
  {
    from: el('common', 'workflow-safe'),
    disallow: values(el('common', not('workflow-safe')), el('provider', 'contract')),
  },
  { from: el('common', 'workflow-safe'), allow: types(el('common'), el('provider', 'contract')) },
  // The emulated provider shares only the provider's wire contract, nothing of paysaga.
  { from: el('sandbox'), allow: values(el('sandbox'), el('provider', 'contract')) },
  // The store: PostgreSQL tables and typed queries over common's shapes; never loaded by workflow code.
  { from: el('store'), allow: values(el('store'), el('common'), el('provider', 'contract')) },
  {
    from: el('activities'),
    allow: values(el('activities'), el('store'), el('common'), el('provider')),
  },
  // Workflow code loads only workflow-safe files; activities, Node-only common files and the provider's
  // schemas it knows as types.
  { from: el('workflows'), allow: values(el('workflows'), el('common', 'workflow-safe')) },
  { from: el('workflows'), allow: types(el('activities'), el('common'), el('provider', 'contract')) },
  // The client reads workflow results with the pure workflow files, and starts workflows by their types.
  {
    from: el('client'),
    allow: values(el('client'), el('store'), el('common'), el('provider'), el('workflows', 'pure')),
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
      el('provider'),
    ),
  },
  { from: el('api'), allow: values(el('api'), el('client'), el('store'), el('common'), el('provider')) },
  { from: el('cli'), allow: values(...LAYERS.map((layer) => el(layer))) },
];

export const layersConfig = {
  files: LAYERS.map((layer) => `${layer}/**`),
  plugins: { boundaries },
  settings: {
    'boundaries/elements': LAYERS.map((type) => ({ type, pattern: type, partialMatch: false })),
    'boundaries/files': [
      { category: 'contract', pattern: CONTRACT },
      { category: 'workflow-safe', pattern: ['workflows/**', ...WORKFLOW_SAFE_COMMON] },
      { category: 'pure', pattern: PURE },
      // every file has a category, so that `noneOf` selects the files outside the others
      { category: 'file', pattern: '**/*' },
    ],
    'import/resolver': { node: { extensions: ['.ts', '.js'] } },
  },
  rules: {
    'boundaries/dependencies': ['error', { default: 'disallow', checkInternals: true, policies }],
  },
};
