/**
 * Delivers events from the store's outbox (docs/decisions/013-the-backend-is-told.md): each worker process
 * takes due deliveries (lane heads: one at a time per endpoint and subject, in order) with a lease, sends
 * each as one signed POST, and records the attempt: delivered on a 2xx, otherwise tried again after a pause
 * that grows up to `maxRetryMs`, until `retryForMs` after it was queued, then failed. Workers share the work
 * through the store; one that dies lets go when its leases end. A write in this process wakes it at once;
 * otherwise it looks every `pollMs`.
 *
 * Secrets are derived at sending time (platform/event-secrets.ts) or come from this worker's
 * PAYSAGA_EVENT_ENDPOINTS; none passes through the store or Temporal.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { retryPauseMs, type DeliveryAttempt, type EventDeliveryPolicy } from '../common/event-delivery';
import { deriveEndpointSecret, type SigningKeys } from '../platform/event-secrets';
import type { PaysagaEvent } from '../common/events';
import type { Store } from '../store/database';
import { finishAttempt, takeDueDeliveries, type DueDelivery } from '../store/deliveries';
import { getEndpoint, type EndpointRecord } from '../store/endpoints';
import { deliveriesQueued, getEvent } from '../store/events';
import type { OutboundGuard } from '../platform/outbound-guard';
import { sendEvent } from './event-sender';

export interface DispatcherOptions {
  store: Store;
  policy: EventDeliveryPolicy;
  /** PAYSAGA_EVENT_ENDPOINTS of this worker: their secrets. */
  configuredSecrets?: Map<string, string[]>;
  signingKeys?: SigningKeys;
  /** Deliveries in flight at once in this process. */
  concurrency: number;
  /** How often the store is asked for due deliveries when nothing woke this process. */
  pollMs?: number;
  logger?: Pick<Logger, 'warn' | 'info'>;
  /** Where deliveries may go (PAYSAGA_EVENT_ALLOW_HTTP, PAYSAGA_EVENT_ALLOW_HOSTS). */
  guard: OutboundGuard;
  /** Sends one delivery (tests replace it to watch attempts); default: sendEvent. */
  send?: typeof sendEvent;
}

const DEFAULT_POLL_MS = 500;
/** A lease lasts the attempt's timeout and this: a worker that died lets go this soon after. */
const LEASE_MARGIN_MS = 10_000;

export class EventDispatcher {
  private readonly owner = `worker-${randomUUID()}`;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  private running: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private readonly onQueued = () => this.wake();

  constructor(private readonly o: DispatcherOptions) {}

  start(): void {
    if (this.running) return;
    deliveriesQueued.on('queued', this.onQueued);
    this.running = this.loop();
  }

  /** Stops taking deliveries and waits for those in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    deliveriesQueued.off('queued', this.onQueued);
    this.wake();
    await this.running;
    await Promise.allSettled([...this.inFlight]);
    await this.o.guard.close();
  }

  wake(): void {
    this.wakeUp?.();
  }

  private async loop(): Promise<void> {
    const pollMs = this.o.pollMs ?? DEFAULT_POLL_MS;
    while (!this.stopped) {
      const free = this.o.concurrency - this.inFlight.size;
      let taken: DueDelivery[] = [];
      if (free > 0) {
        try {
          taken = await takeDueDeliveries(this.o.store, {
            owner: this.owner,
            limit: free,
            leaseMs: this.o.policy.timeoutMs + LEASE_MARGIN_MS,
          });
        } catch (err) {
          this.o.logger?.warn(
            { err: (err as Error).message },
            'event deliveries could not be read from the store',
          );
        }
      }
      for (const d of taken) {
        const p: Promise<void> = this.deliver(d).finally(() => {
          this.inFlight.delete(p);
          this.wake();
        });
        this.inFlight.add(p);
      }
      if (taken.length > 0 && taken.length === free) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  private async deliver(d: DueDelivery): Promise<void> {
    const at = new Date();
    let attempt: DeliveryAttempt;
    let gone = false;
    try {
      const [event, endpoint] = await Promise.all([
        getEvent(this.o.store, d.eventId),
        getEndpoint(this.o.store, d.endpointId),
      ]);
      if (!endpoint || !event) {
        gone = true;
        attempt = { at: at.toISOString(), latencyMs: 0, error: 'the endpoint was deleted' };
      } else {
        const { seq: _seq, ...body } = event;
        attempt = await (this.o.send ?? sendEvent)({
          url: endpoint.url,
          event: body as PaysagaEvent,
          secrets: this.secretsOf(endpoint),
          timeoutMs: this.o.policy.timeoutMs,
          redelivery: d.redelivery,
          guard: this.o.guard,
        });
      }
    } catch (err) {
      // The store's fault, not the endpoint's: the detail goes to the worker's log, not the delivery log.
      this.o.logger?.warn({ eventId: d.eventId, err: (err as Error).message }, 'delivery not sent');
      attempt = { at: at.toISOString(), latencyMs: 0, error: 'not sent: the store could not be read' };
    }
    const delivered = attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300;
    const retryAt = new Date(Date.now() + retryPauseMs(this.o.policy, d.attempts + 1));
    const next = gone
      ? ({ status: 'canceled' } as const)
      : delivered
        ? ({ status: 'delivered' } as const)
        : retryAt >= d.giveUpAt
          ? ({ status: 'failed' } as const)
          : ({ status: 'pending', retryAt } as const);
    // The record is retried while the lease lasts; past it another worker sends again (at least once).
    const until = Date.now() + LEASE_MARGIN_MS / 2;
    for (let pause = 200; ; pause = Math.min(pause * 2, 5_000)) {
      try {
        await finishAttempt(this.o.store, d, this.owner, attempt, next);
        return;
      } catch (err) {
        if (Date.now() > until) {
          this.o.logger?.warn({ eventId: d.eventId, err: (err as Error).message }, 'delivery not recorded');
          return;
        }
        await sleep(pause);
      }
    }
  }

  /** The secrets that sign for `endpoint` now: the current one first, then those still in their grace. */
  private secretsOf(endpoint: EndpointRecord): string[] {
    if (endpoint.source === 'config') {
      const secrets = this.o.configuredSecrets?.get(endpoint.id);
      if (!secrets?.length)
        throw new Error(
          'no secret for this endpoint on this worker (PAYSAGA_EVENT_ENDPOINTS differs between workers?)',
        );
      return secrets;
    }
    return [
      deriveEndpointSecret(this.o.signingKeys, endpoint.secretKeyId, endpoint.id, endpoint.secretVersion),
      ...endpoint.previous.map((p) =>
        deriveEndpointSecret(this.o.signingKeys, p.keyId, endpoint.id, p.version),
      ),
    ];
  }
}
