/**
 * The provider's service keys a session has seen its worker verify its events with (DESIGN decision 16),
 * held by runs patched `held-keys` (workflows/session/inbox.ts). A later event signed with one of them
 * is checked here, in workflow code, instead of in a local activity: a card checkout's second webhook
 * then costs no activation, marker or codec round of its own. The keys come only from the worker's
 * verdicts (local-activity results), never from a signal or the run's input, so whoever can write to
 * Temporal still cannot make a session believe a key; and they are in the history, so a replay checks
 * with the same keys whatever the worker holds by then. A signature none of them verifies (a new key, a
 * forgery) goes to the worker, which decides.
 */
import { defineWebhookEvent, readWebhookEvent, type WebhookEvent } from '../provider/schemas';
import { scrubCardData } from '../provider/schemas/card';
import { RsaSha256Verifier, type RsaPublicNumbers } from '../provider/schemas/signature';
import { WARM_EVENTS } from './webhook-warmup';

/** What a provider event's signature proves: the event, or why it is refused. */
export type ProviderEventProof =
  | {
      ok: true;
      event: WebhookEvent;
      /** The service key that verified it (an RSA key's numbers): the session checks later ones itself. */
      key?: RsaPublicNumbers;
    }
  | { ok: false; reason: string };

/**
 * How long a run believes a key after the worker last verified with it: a key the provider withdraws
 * (rotation, compromise) is no longer believed here past this, whatever the run's length (subscriptions
 * live for months).
 */
export const KEY_HELD_MS = 60 * 60_000;
/** Old and new during a rotation, with room to spare. */
const MAX_KEYS = 4;

/**
 * The event schema, a copy of its own. The SDK deep-freezes what the modules a worker preloads for all
 * its workflows export (workers/workflow-bundle-options.ts), and zod writes to its objects as it parses
 * (a pattern's lastIndex, a parse function it settles on): the exported schemas throw in workflow code.
 * This copy is reachable from no export, so it stays writable; it is the same for every workflow and
 * holds nothing of theirs (the rule for a preloaded module). Readings at load (common/webhook-warmup.ts)
 * make zod set up, before the freeze, the classes it first needs while parsing (a failed parse's error
 * among them). Should anything still throw, the event goes to the worker's check (readOnceSettled).
 */
const eventSchema = defineWebhookEvent();
for (const event of WARM_EVENTS) readWebhookEvent(JSON.stringify(event), eventSchema);

/**
 * A reading that does not depend on what this worker thread read before, which is what keeps a replay
 * on another thread the same. zod sets up a class the first time it makes one (an error, say); should
 * that first time fall after the SDK's freeze, it throws once and then works, so a throw is read again:
 * a second throw is what every thread gets, and the worker decides.
 */
function readOnceSettled(body: string): ReturnType<typeof readWebhookEvent> | undefined {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      return readWebhookEvent(body, eventSchema);
    } catch {
      // read again, or leave it to the worker (see above)
    }
  }
  return undefined;
}

export class HeldKeys {
  private held: { verifier: RsaSha256Verifier; since: number }[] = [];

  /** The worker verified an event of this session with `key` (now, by the workflow's clock). */
  hold(key: RsaPublicNumbers): void {
    let verifier: RsaSha256Verifier;
    try {
      verifier = new RsaSha256Verifier(key);
    } catch {
      return; // not a key this code can use: the worker keeps deciding
    }
    this.held = this.held.filter((h) => h.verifier.numbers.n !== key.n);
    this.held.push({ verifier, since: Date.now() });
    if (this.held.length > MAX_KEYS) this.held.shift();
  }

  /** The proof, when a key held signed the event; undefined when the worker must decide. */
  check(signed: { body: string; signature: string }): ProviderEventProof | undefined {
    const now = Date.now();
    this.held = this.held.filter((h) => now - h.since < KEY_HELD_MS);
    if (!this.held.some((h) => h.verifier.verify(signed.body, signed.signature))) return undefined;
    const read = readOnceSettled(signed.body);
    if (!read) return undefined;
    if (!read.ok) return { ok: false, reason: `${read.reason}: ${read.detail}` };
    // As the worker's verdict arrives (JSON, without card fields), so both ways give the session the same.
    return { ok: true, event: JSON.parse(JSON.stringify(scrubCardData(read.event))) as typeof read.event };
  }
}
