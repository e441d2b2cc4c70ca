/*
 * The redelivery schedule of sandbox webhooks (spec, Events, delivery rules 2-3):
 * pauses grow and never exceed 15 minutes; when no attempt has succeeded 30 minutes after the first,
 * delivery stops for good.
 *
 * Unscaled, the attempts of an event whose partner never answers 2xx are at
 *   0, 5 s, 20 s, 50 s, 1 m 50 s, 3 m 50 s, 8 m 50 s, 18 m 50 s, 30 m   (9 attempts)
 * i.e. pauses 5 s, 15 s, 30 s, 1 m, 2 m, 5 m, 10 m, then a last pause shortened to land exactly on the
 * 30-minute mark (11 m 10 s): the provider gets one last chance at the deadline instead of giving up
 * 11 minutes early. Every duration is multiplied by the sandbox's timeScale.
 */

export const RETRY_PAUSES_MS: readonly number[] = [
  5_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000,
];
export const MAX_PAUSE_MS = 15 * 60_000;
export const GIVE_UP_AFTER_MS = 30 * 60_000;

/**
 * Pause before the next attempt, in real (scaled) ms, or null when delivery must stop.
 * @param failedAttempts attempts made so far (1 after the first failure)
 * @param elapsedMs real ms since the first attempt started
 */
export function nextPauseMs(failedAttempts: number, elapsedMs: number, timeScale: number): number | null {
  const deadline = GIVE_UP_AFTER_MS * timeScale;
  const remaining = deadline - elapsedMs;
  if (remaining <= 0) return null;
  const planned = (RETRY_PAUSES_MS[failedAttempts - 1] ?? MAX_PAUSE_MS) * timeScale;
  return Math.min(planned, MAX_PAUSE_MS * timeScale, remaining);
}

/** Longest wait for one attempt's answer: 10 s, scaled, but never under 250 ms so a small timeScale still lets localhost answer. */
export function attemptTimeoutMs(timeScale: number): number {
  return Math.max(250, 10_000 * timeScale);
}
