import type { FastifyBaseLogger } from 'fastify';
import { timestamp, type Timers } from '../clock';
import type { Project, ResolvedSandboxConfig } from '../config';
import type { OperationErrorCode } from '../errors';
import type { LedgerKind } from '../ledger';
import type { OperationRecord, SessionRecord, Stage } from '../model';
import type { FaultInjector } from '../faults';
import type { Scheduler } from '../scheduler';
import type { SandboxState } from '../state';
import { SessionView } from '../view';
import type { WebhookDispatcher } from '../webhooks';
import type { Job } from './job';

/** Public status of an operation in a stage that is not final. */
const OPEN_STAGE_STATUS: Record<Exclude<Stage, 'done'>, 'pending' | 'ongoing'> = {
  preparing: 'pending',
  awaiting_approval: 'pending',
  awaiting_finalization: 'pending',
  processing: 'ongoing',
  awaiting_3ds: 'ongoing',
  awaiting_payer_qr: 'ongoing',
  capturing: 'ongoing',
};

export interface FlowDeps {
  config: ResolvedSandboxConfig;
  state: SandboxState;
  timers: Timers;
  scheduler: Scheduler<Job>;
  dispatcher: WebhookDispatcher;
  /** where payers reach the sandbox (3-D Secure page, QR deep link) */
  publicUrl: () => string;
  log: FastifyBaseLogger;
  /** Faults acted out inside a flow (the `overcapture` rule); absent: none. */
  faults?: Pick<FaultInjector, 'overcapture'>;
}

/** What every flow step needs: state, timers, webhooks, and the primitive transitions. */
export class FlowContext {
  readonly config: ResolvedSandboxConfig;
  readonly state: SandboxState;
  readonly timers: Timers;
  readonly scheduler: Scheduler<Job>;
  readonly view: SessionView;
  readonly publicUrl: () => string;
  readonly log: FastifyBaseLogger;
  readonly faults: Pick<FaultInjector, 'overcapture'> | undefined;
  private readonly dispatcher: WebhookDispatcher;

  constructor(deps: FlowDeps) {
    this.config = deps.config;
    this.state = deps.state;
    this.timers = deps.timers;
    this.scheduler = deps.scheduler;
    this.dispatcher = deps.dispatcher;
    this.publicUrl = deps.publicUrl;
    this.log = deps.log;
    this.faults = deps.faults;
    this.view = new SessionView(deps.state, (projectId) => deps.config.projects.get(projectId)?.fees);
  }

  project(id: string): Project {
    const p = this.config.projects.get(id);
    if (!p) throw new Error(`unknown project ${id}`);
    return p;
  }

  sessionOf(op: OperationRecord): SessionRecord {
    const s = this.state.sessions.get(op.sessionId);
    if (!s) throw new Error(`operation ${op.id} without session`);
    return s;
  }

  /** Runs the next step of a flow after one (scaled) step pause; the step re-checks the stage it expects. */
  later(job: Job): void {
    this.scheduler.after(this.config.stepMs, job);
  }

  /** Schedules `job` after `serviceMs` (scaled); the id cancels it. */
  schedule(serviceMs: number, job: Job): string {
    return this.scheduler.after(serviceMs, job);
  }

  /**
   * The session changed: a new updated_at, and the store writes it at the end of the unit of work.
   * Every change of a session, its operations or refunds ends here (directly or through setStage,
   * succeed, fail).
   */
  touch(session: SessionRecord): void {
    session.updatedAt = timestamp();
    this.state.saveSession(session);
  }

  setStage(op: OperationRecord, stage: Exclude<Stage, 'done'>): void {
    op.stage = stage;
    op.status = OPEN_STAGE_STATUS[stage];
    this.touch(this.sessionOf(op));
  }

  /** Event of the spec for the session as it is now; the webhook carries a deep snapshot. */
  emit(session: SessionRecord, type: string): void {
    const project = this.project(session.projectId);
    const enabled = project.webhooks && project.webhookUrl !== undefined;
    this.state.recordEvent({
      at: timestamp(),
      type,
      projectId: project.id,
      sessionId: session.id,
      sent: enabled,
    });
    const sessionInfo = this.view.session(session, { upperCaseCurrency: project.upperCaseWebhookCurrency });
    this.dispatcher.enqueue(
      { projectId: project.id, url: project.webhookUrl ?? '', enabled },
      { type, session_info: sessionInfo },
    );
  }

  move(op: OperationRecord, kind: LedgerKind, amount: number, refundId?: string): void {
    if (amount <= 0) return;
    const session = this.sessionOf(op);
    this.state.ledger.record({
      projectId: session.projectId,
      sessionId: session.id,
      operationId: op.id,
      ...(refundId ? { refundId } : {}),
      kind,
      amount,
      currency: op.sum.currency_code,
    });
  }

  private close(op: OperationRecord): void {
    this.scheduler.cancel(op.expiryJob);
    op.expiryJob = undefined;
    op.stage = 'done';
    op.completedAt = timestamp();
    if (op.kind === 'payment') {
      op.userAction = undefined;
      if (op.challengeId) this.state.challenges.delete(op.challengeId);
      op.challengeId = undefined;
    }
  }

  /** Final success: checkout_results. */
  succeed(op: OperationRecord): void {
    this.close(op);
    op.status = 'successful';
    const session = this.sessionOf(op);
    this.touch(session);
    this.emit(session, 'checkout_results');
  }

  /** Final failure: held funds go back, the session is canceled, checkout_results. */
  fail(op: OperationRecord, code: OperationErrorCode, description: string): void {
    if (op.kind === 'payment' && op.held > 0) {
      this.move(op, 'release', op.held);
      op.held = 0;
    }
    this.close(op);
    op.status = 'unsuccessful';
    op.error = { error_code: code, error_description: description };
    const session = this.sessionOf(op);
    this.touch(session);
    this.emit(session, 'checkout_results');
  }

  /** The test scenario selected by user_info.customer.reference, if any. */
  scenario(op: OperationRecord): 'thief' | 'loser' | undefined {
    const customer = op.echo.user_info?.customer as { reference?: unknown } | undefined;
    const ref = typeof customer?.reference === 'string' ? customer.reference.trim().toLowerCase() : '';
    return ref === 'thief' || ref === 'loser' ? ref : undefined;
  }
}
