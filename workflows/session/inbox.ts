/**
 * How news of the provider reaches a session (docs/decisions/016-results-are-proven.md: nobody can fake
 * an outcome). Signal handlers only queue a delivery; the session's own loop judges them one at a time,
 * in the order they came: a signed one is verified again by this worker (the `verifyProviderEvent`
 * activity, with the service keys the worker holds now) and applied if it is news; anything unsigned (a
 * state sync, a payer's return, a claim the starter reported) is at most a reason to read
 * transaction/state (`lookAsked`). Every delivery is in the webhook audit trail, a refused one with why.
 * Nothing a signal carries can fail a workflow task.
 */
import * as wf from '@temporalio/workflow';
import { isFinalPhase } from '../../common/kinds';
import { parseMessage, providerEventDelivery, UNENCRYPTED } from '../../common/message-schemas';
import type { ProviderEventDelivery, SessionState } from '../../common/session-input';
import { isNewer, moneybackOf } from '../../common/snapshot';
import type { ProviderEventRecord } from '../../common/views';
import type { SessionInfo, WebhookEvent } from '../../provider/schemas';
import { proofs } from '../calls';
import { iso } from '../iso';
import { PayerReturnThrottle } from '../payer-return';
import type { SessionRecorder } from './recorder';
import type { SessionReducer } from './reducer';

const MAX_PROVIDER_EVENTS = 200;
const MAX_RECORDED = 40;
/** How far ahead of the workflow's clock a reported snapshot's updated_at may be (clocks differ). */
const CLOCK_SKEW_MS = 5 * 60_000;

/** A provider delivery as the signal handler queued it: what it claims, its proof if any, or why not. */
interface HeardDelivery {
  heard: { receivedAt: string; type: string; via: ProviderEventDelivery['via'] };
  signed?: { body: string; signature: string };
  /** The state its body says it carries: never applied, only a reason not to check it (see judge). */
  claimed?: SessionInfo;
  refused?: string;
}

export class ProviderInbox {
  /** A look at transaction/state is wanted (the session's waits take it: runtime.ts). */
  lookAsked = false;
  /** A flood of payer returns is one state check per interval (docs/decisions/014-two-listeners.md). */
  private readonly payerReturns = new PayerReturnThrottle();
  /** Unproven deliveries (syncs, unsigned claims) ask for a state read at most this often, too. */
  private readonly looks = new PayerReturnThrottle();
  /** Deliveries heard and not yet judged, oldest first. */
  private readonly heard: HeardDelivery[] = [];

  constructor(
    private readonly state: SessionState,
    private readonly reducer: SessionReducer,
    private readonly recorder: SessionRecorder,
  ) {
    void this.judgeInOrder();
  }

  /** Nothing heard is waiting to be judged. */
  get empty(): boolean {
    return this.heard.length === 0;
  }

  /** A provider event signal: parsed, then queued for judging. */
  receive(payload: unknown): void {
    const parsed = parseMessage(providerEventDelivery, payload);
    if (!parsed.ok) {
      const heard = { receivedAt: iso(Date.now()), type: 'unknown', via: 'webhook' as const };
      this.heard.push({
        heard,
        refused: parsed.why === UNENCRYPTED ? parsed.why : `malformed: ${parsed.why}`,
      });
      return;
    }
    const d = parsed.value;
    const claim = d.signed ? claimOf(d.signed.body) : undefined;
    const heard = { receivedAt: d.receivedAt, type: d.event?.type ?? claim?.type ?? 'unknown', via: d.via };
    const claimed = claim?.sessionInfo;
    this.heard.push(d.signed ? { heard, signed: d.signed, ...(claimed ? { claimed } : {}) } : { heard });
  }

  /** The payer came back: a look at the state, at most once per interval. */
  payerReturned(): void {
    if (!this.payerReturns.admit(Date.now())) return;
    this.reducer.journal.log('payer', 'returned');
    this.lookAsked = true;
  }

  /**
   * A snapshot reported by someone other than this worker's own provider calls (the starter's answer to
   * its start call, which carried card data outside Temporal). It may move the session along (a 3-D
   * Secure redirect, an operation to approve: what the session does next is a provider call of its own,
   * which the provider answers truthfully); a result, money back, a time ahead of the clock (which would
   * make the provider's real states look older) or a shape the session cannot read is confirmed by
   * transaction/state first.
   */
  claim(snapshot: SessionInfo, type: string): void {
    if (this.readable(snapshot)) {
      this.reducer.apply(snapshot, 'call', type);
      return;
    }
    this.reducer.journal.log('call', type, 'reported: confirming with transaction/state');
    this.lookAsked = true;
  }

  /** The webhook audit trail, and the provider events kept for replay (both bounded). */
  audited(): { records: ProviderEventRecord[]; recorded: ProviderEventDelivery[] } {
    return { records: [...this.state.providerEvents], recorded: [...this.state.recorded] };
  }

  /** A claimed snapshot the session may apply on its word (see claim). */
  private readable(snapshot: SessionInfo): boolean {
    try {
      const updated = snapshot.updated_at ? Date.parse(snapshot.updated_at) : NaN;
      return (
        snapshot.id === this.state.sessionId &&
        Number.isFinite(updated) &&
        updated <= Date.now() + CLOCK_SKEW_MS &&
        !isFinalPhase(this.reducer.phaseOf(snapshot)) &&
        moneybackOf(snapshot).length === 0 &&
        (this.reducer.mismatchOf(snapshot), true)
      );
    } catch {
      return false;
    }
  }

  /** Judges deliveries one at a time, in the order they came, from the workflow's own loop. */
  private async judgeInOrder(): Promise<void> {
    for (;;) {
      await wf.condition(() => this.heard.length > 0);
      try {
        await this.judge(this.heard[0]!);
      } finally {
        this.heard.shift();
      }
    }
  }

  private async judge({ heard, signed, claimed, refused }: HeardDelivery): Promise<void> {
    if (refused) {
      this.audit(heard, 'refused', refused);
      return;
    }
    if (!signed) {
      // A state sync (the reconciler read it), or a webhook that could not travel signed: look for ourselves.
      if (heard.via === 'sync') this.audit(heard, 'confirming');
      else this.audit(heard, 'refused', 'unsigned');
      if (this.looks.admit(Date.now())) this.lookAsked = true;
      return;
    }
    // Checking is for news: an event whose body says it carries what the session already holds (the
    // starter's report of the same state, a redelivery) could change nothing, so it is recorded as known
    // without the worker's check. Nothing unchecked is ever applied: a body that is news is checked.
    const known = this.known(claimed);
    if (known) {
      this.audit(
        { ...heard, ...(claimed?.updated_at ? { updatedAt: claimed.updated_at } : {}) },
        known,
        'already known: not checked',
      );
      this.reducer.journal.log(heard.via === 'sync' ? 'poll' : 'webhook', heard.type, `ignored: ${known}`);
      return;
    }
    let proof;
    try {
      proof = await this.recorder.during(() => proofs.verifyProviderEvent(signed));
    } catch (err) {
      // The worker could not check it (no service key configured, a fault): the provider's state decides.
      const why = err instanceof wf.ActivityFailure ? (err.cause?.message ?? err.message) : String(err);
      this.audit(heard, 'confirming', `not verified: ${why}`);
      this.lookAsked = true;
      return;
    }
    if (!proof.ok) this.audit(heard, 'refused', `${proof.reason}: ${proof.detail}`);
    else if (proof.event.session_info.id !== this.state.sessionId)
      this.audit({ ...heard, type: proof.event.type }, 'refused', 'signed for another session');
    else this.receiveVerified({ receivedAt: heard.receivedAt, via: heard.via, signed, event: proof.event });
  }

  /** Whether a claimed state is no news to the session: the outcome it would have, else undefined. */
  private known(claimed: SessionInfo | undefined): 'duplicate' | 'older' | undefined {
    const held = this.state.snapshot;
    if (!claimed || !held || claimed.id !== this.state.sessionId) return undefined;
    try {
      if (isNewer(claimed, held)) return undefined;
      return isNewer(held, claimed) ? 'older' : 'duplicate';
    } catch {
      // A claim the session cannot read is checked by the worker.
      return undefined;
    }
  }

  /** A provider event the provider signed: recorded, then applied if it is news. */
  private receiveVerified(delivery: ProviderEventDelivery & { event: WebhookEvent }): void {
    const held = this.state.snapshot;
    const applied =
      delivery.event.session_info.id === this.state.sessionId && isNewer(delivery.event.session_info, held);
    const outcome = applied
      ? 'applied'
      : held && isNewer(held, delivery.event.session_info)
        ? 'older'
        : 'duplicate';
    this.audit(
      {
        receivedAt: delivery.receivedAt,
        type: delivery.event.type,
        via: delivery.via,
        ...(delivery.event.session_info.updated_at
          ? { updatedAt: delivery.event.session_info.updated_at }
          : {}),
      },
      outcome,
    );
    if (delivery.via !== 'replay') {
      // Kept for `paysaga webhooks replay` as it came: signed, so a replay is verified again.
      const { event: _verified, ...kept } = delivery;
      this.state.recorded.push(kept);
      if (this.state.recorded.length > MAX_RECORDED)
        this.state.recorded.splice(0, this.state.recorded.length - MAX_RECORDED);
    }
    const source = delivery.via === 'webhook' || delivery.via === 'replay' ? 'webhook' : 'poll';
    if (applied) this.reducer.apply(delivery.event.session_info, source, delivery.event.type);
    else this.reducer.journal.log(source, delivery.event.type, `ignored: ${outcome}`);
  }

  /** One entry of the webhook audit trail (and of the event log when it changes nothing). */
  private audit(
    heard: Omit<ProviderEventRecord, 'outcome' | 'detail'>,
    outcome: ProviderEventRecord['outcome'],
    detail?: string,
  ): void {
    this.state.providerEvents.push({ ...heard, outcome, ...(detail ? { detail } : {}) });
    this.state.auditCount = (this.state.auditCount ?? 0) + 1;
    if (this.state.providerEvents.length > MAX_PROVIDER_EVENTS)
      this.state.providerEvents.splice(0, this.state.providerEvents.length - MAX_PROVIDER_EVENTS);
    if (outcome === 'refused' || outcome === 'confirming') {
      this.reducer.journal.log(
        heard.via === 'sync' ? 'poll' : 'webhook',
        heard.type,
        `${outcome}${detail ? `: ${detail}` : ''}`,
      );
      if (outcome === 'refused')
        wf.log.warn('provider event refused', {
          sessionId: this.state.sessionId,
          via: heard.via,
          reason: detail,
        });
    }
  }
}

/** What a webhook body says it is (unchecked): its type and session state, as far as they can be read. */
function claimOf(body: string): { type?: string; sessionInfo?: SessionInfo } | undefined {
  try {
    const event = JSON.parse(body) as { type?: unknown; session_info?: unknown } | null;
    if (!event || typeof event !== 'object') return undefined;
    const info = event.session_info;
    return {
      ...(typeof event.type === 'string' ? { type: event.type.slice(0, 200) } : {}),
      ...(info && typeof info === 'object' ? { sessionInfo: info as SessionInfo } : {}),
    };
  } catch {
    return undefined;
  }
}
