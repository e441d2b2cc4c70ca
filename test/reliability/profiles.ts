/**
 * How big and how long a reliability run is. `full` is `npm run test:reliability` (a few hundred
 * sessions, faults lasting minutes, about a quarter of an hour); `ci` is the subset CI runs (tens of
 * sessions, faults of a minute or more, about five minutes); `tiny` is the smallest run that still has
 * every part (the planted double charge alone). RELIABILITY_PROFILE picks one, RELIABILITY_SEED repeats a
 * run.
 */

export const PROFILE_NAMES = ['full', 'ci', 'tiny'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

export interface Profile {
  name: ProfileName;
  /** Sessions of the mix, created while the faults run. */
  sessions: number;
  /** Card checkouts with allowRecurring made first, before any fault: tokens for the rest. */
  tokenSessions: number;
  subscriptions: number;
  /** Periods each subscription is charged before the suite cancels it. */
  periods: number;
  intervalMs: number;
  /** The mix is created between these times (ms after the start). */
  createFromMs: number;
  createUntilMs: number;
  /** Fault windows open and close within these times. */
  faultsFromMs: number;
  faultsUntilMs: number;
  /** How long one fault window lasts: longer than every retry budget (Temporal's ~30 s, then paysaga's). */
  windowMs: readonly [number, number];
  /** Windows of each family of faults (provider 5xx, timeouts, commit-then-drop, each webhook fault). */
  windowsPerFamily: number;
  workerKills: number;
  apiRestarts: number;
  temporalRestarts: number;
  /**
   * paysaga's store (PostgreSQL) down this long, under load, once (0: never): records and events wait,
   * money must not move twice and no webhook may be lost.
   */
  storeOutageMs: number;
  /** PostgreSQL crashes (immediate shutdown) and is started again at once. */
  storeRestarts: number;
  /** After the last fault and the last scripted action: the most time every session gets to be final. */
  settleMs: number;
  workers: number;
  apis: number;
  /** Session settings (sent with every create): deadlines that end what nobody finishes, short polls. */
  sessionMs: number;
  decisionDeadlineMs: readonly [number, number];
  payerActionMs: number;
  startMs: number;
  followMs: number;
  recheckMs: number;
  /** The worker's and API's provider timeout, and the latency of the timeout faults (longer). */
  providerTimeoutMs: number;
  timeoutLatencyMs: number;
  sandbox: { stepMs: number; qrTtlSeconds: number; threeDsTtlSeconds: number };
  reconcileEveryMs: number;
  /** How long a partner (the suite) keeps retrying one call that answers 5xx or nothing. */
  partnerPatienceMs: number;
}

const MIN = 60_000;

const common = {
  tokenSessions: 4,
  workers: 2,
  apis: 2,
  payerActionMs: 90_000,
  startMs: 90_000,
  followMs: 20_000,
  recheckMs: 15_000,
  providerTimeoutMs: 5_000,
  timeoutLatencyMs: 15_000,
  sandbox: { stepMs: 500, qrTtlSeconds: 20, threeDsTtlSeconds: 90 },
  reconcileEveryMs: 2 * MIN,
  decisionDeadlineMs: [45_000, 90_000] as const,
};

export const PROFILES: Record<ProfileName, Profile> = {
  full: {
    ...common,
    name: 'full',
    // 300 starved a busy 2-core machine (workflow tasks waited minutes for a worker): 200 plus the
    // subscriptions' charges is what one such machine carries through the faults.
    sessions: 200,
    subscriptions: 6,
    periods: 4,
    intervalMs: 45_000,
    createFromMs: 20_000,
    createUntilMs: 10 * MIN,
    faultsFromMs: 30_000,
    faultsUntilMs: 11 * MIN,
    windowMs: [75_000, 4 * MIN],
    windowsPerFamily: 3,
    workerKills: 5,
    apiRestarts: 3,
    temporalRestarts: 2,
    storeOutageMs: 4 * MIN,
    storeRestarts: 1,
    settleMs: 6 * MIN,
    sessionMs: 8 * MIN,
    partnerPatienceMs: 6 * MIN,
  },
  ci: {
    ...common,
    name: 'ci',
    sessions: 40,
    subscriptions: 2,
    periods: 3,
    intervalMs: 25_000,
    createFromMs: 10_000,
    createUntilMs: 190_000,
    faultsFromMs: 20_000,
    faultsUntilMs: 220_000,
    windowMs: [65_000, 75_000],
    windowsPerFamily: 1,
    workerKills: 2,
    apiRestarts: 1,
    temporalRestarts: 1,
    storeOutageMs: 3 * MIN,
    storeRestarts: 1,
    settleMs: 3 * MIN,
    sessionMs: 5 * MIN,
    // Past the store's outage: a creating call answers 503 all through it.
    partnerPatienceMs: 5 * MIN,
  },
  tiny: {
    ...common,
    name: 'tiny',
    tokenSessions: 1,
    sessions: 8,
    subscriptions: 1,
    periods: 2,
    intervalMs: 10_000,
    createFromMs: 8_000,
    createUntilMs: 30_000,
    faultsFromMs: 10_000,
    faultsUntilMs: 70_000,
    windowMs: [20_000, 30_000],
    windowsPerFamily: 1,
    workerKills: 1,
    apiRestarts: 1,
    temporalRestarts: 0,
    storeOutageMs: 20_000,
    storeRestarts: 1,
    settleMs: 2 * MIN,
    sessionMs: 4 * MIN,
    partnerPatienceMs: 2 * MIN,
  },
};

export function profileFromEnv(env: NodeJS.ProcessEnv = process.env): Profile {
  const name = (env.RELIABILITY_PROFILE || 'full') as ProfileName;
  const profile = PROFILES[name];
  if (!profile)
    throw new Error(
      `RELIABILITY_PROFILE must be one of ${PROFILE_NAMES.join(', ')}, got ${JSON.stringify(name)}`,
    );
  return profile;
}
