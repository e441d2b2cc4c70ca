/**
 * The activities workflows call, in one place, with named option sets. Temporal's retry policy owns
 * retries of provider calls (each attempt visible in the activity's history): a few quick attempts, then
 * the workflow takes over with its own capped backoff (`untilAnswered`, used by the session runtime's
 * `call`), so a provider that is down for hours never ends a session while money may move.
 */
import * as wf from '@temporalio/workflow';
import type { ProofActivities, ProviderActivities } from '../activities/types';
import { FAILURE_TYPES, failureOf } from '../common/failures';

/** About half a minute of attempts (1 s, 2 s, 4 s, 8 s, 16 s apart), then the workflow's backoff. */
const PROVIDER_CALL: wf.ActivityOptions = {
  startToCloseTimeout: '45s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 6 },
};

export const provider = wf.proxyActivities<ProviderActivities>(PROVIDER_CALL);
/**
 * Checking a webhook's signature is a few milliseconds of the worker's work; a worker that cannot (no
 * service key, a fault) is a fault to show, and the provider's state decides meanwhile.
 */
export const proofs = wf.proxyActivities<ProofActivities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', maximumAttempts: 3 },
});

export interface UntilAnsweredOptions {
  /** The first pause after Temporal's attempts ran out; it doubles up to `maxMs`. */
  pauseMs: number;
  maxMs: number;
  /** Every failure but a refusal: the caller shows it (needs attention). */
  onTrouble(message: string): void;
  /** Refusals are tried again too (reads: nothing a read does is final). */
  retryRefusals?: boolean;
  /** Between two tries: a long outage may continue the workflow as new here. */
  between?: () => Promise<void>;
  /** How a pause of `ms` is taken (a session comes to rest while it pauses). */
  pause?: (ms: number) => Promise<void>;
}

/**
 * Sends until the provider answers (or refuses, which is thrown). When Temporal's attempts run out, the
 * call is tried again after a pause that doubles up to `maxMs`: a provider down for hours delays the
 * session, it never ends it while money may move (docs/decisions/010-one-truth-final-is-final.md).
 */
export async function untilAnswered<T>(send: () => Promise<T>, o: UntilAnsweredOptions): Promise<T> {
  let pause = o.pauseMs;
  for (;;) {
    try {
      return await send();
    } catch (err) {
      if (!(err instanceof wf.ActivityFailure)) throw err;
      const f = failureOf(err);
      if (f?.type === FAILURE_TYPES.providerRefused && !o.retryRefusals) throw err;
      o.onTrouble(f?.message ?? err.message);
      await (o.pause ? o.pause(pause) : wf.sleep(pause));
      await o.between?.();
      pause = Math.min(pause * 2, o.maxMs);
    }
  }
}
