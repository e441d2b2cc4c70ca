/**
 * The in-process client of paysaga, for backend services that embed it and for the HTTP API: one
 * resource each, mirroring the HTTP client (client/http/): sessions, refunds, payouts (several in one
 * session), subscriptions, identity checks.
 */
import type { ReconcilerInput } from '../common/reconciler';
import { DEFAULT_SETTINGS, type SessionSettings } from '../common/settings';
import type { ClientContext, PaymentsClientOptions } from './context';
import { IdentityChecks } from './identity-checks';
import { Payouts } from './payouts';
import { ensureReconciler } from './reconciler';
import { Refunds } from './refunds';
import { Sessions } from './sessions';
import { Subscriptions } from './subscriptions';

export type { PaymentsClientOptions } from './context';

export class PaymentsClient {
  readonly sessions: Sessions;
  readonly refunds: Refunds;
  readonly payouts: Payouts;
  readonly subscriptions: Subscriptions;
  readonly identityChecks: IdentityChecks;
  readonly settings: SessionSettings;
  private readonly ctx: ClientContext;

  constructor(o: PaymentsClientOptions) {
    this.ctx = {
      temporal: o.temporal,
      provider: o.provider,
      taskQueue: o.taskQueue,
      store: o.store,
      settings: o.settings ?? DEFAULT_SETTINGS,
      returnUrl: (sessionId) => o.returnUrls?.forSession(sessionId),
      projectOf: (use) => {
        const projectId = o.projectFor?.(use);
        return projectId ? { projectId } : {};
      },
    };
    this.settings = this.ctx.settings;
    this.sessions = new Sessions(this.ctx);
    this.refunds = new Refunds(this.ctx);
    this.payouts = new Payouts(this.ctx);
    this.subscriptions = new Subscriptions(this.ctx, { testMode: o.providerEnvironment === 'test' });
    this.identityChecks = new IdentityChecks(this.ctx);
  }

  /**
   * Starts (or finds) the reconciler of this task queue: it re-reads recently finished sessions from the
   * provider, so that what changed behind paysaga's back is found and recorded.
   */
  startReconciler(input: ReconcilerInput): Promise<string> {
    return ensureReconciler(this.ctx.temporal, this.ctx.taskQueue, input);
  }
}
