/**
 * One session kind on Temporal's time-skipping server, for the fast kind tests
 * (test/workflows/time-skipping/): the real workflow bundle, a fake provider per session
 * (fake-provider.ts), and the few moves a test makes,
 * in the style of the SDK samples' tests.
 *
 *   const kind = useKindWorker('payout');
 *   const { handle, provider, id, t0 } = await kind.start({ initial: opened, start: transfer(5_000) });
 *   await kind.reaches(handle, 'awaiting_approval');
 *   await handle.executeUpdate(approveUpdate, { args: [{}] });
 *   const state = await kind.result(handle);
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { KINDS, type SessionKind, type SessionPhase } from '../../common/kinds';
import { sessionQuery } from '../../common/messages';
import type { SessionInput, SessionState, StartSpec } from '../../common/session-input';
import { DEFAULT_SETTINGS, mergeSettings, type SettingsOverrides } from '../../common/settings';
import type { SessionInfo } from '../../provider/schemas';
import { FakeProvider } from './fake-provider';
import { useFakeProviderWorker } from './fake-provider-worker';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** Polls at most every 10 minutes and follows the result for an hour: fewer round trips, same rules. */
const QUIET: SettingsOverrides = { polling: { maxMs: 10 * MINUTE }, followMs: HOUR };

export interface KindRun {
  id: string;
  provider: FakeProvider;
  /** The server's time when the session opened (its provider's timeline starts there). */
  t0: number;
  handle: WorkflowHandle;
}

export interface KindStart {
  /** What the provider shows when the session opens. */
  initial: (id: string) => SessionInfo;
  amount?: number;
  start?: StartSpec;
  settings?: SettingsOverrides;
  input?: Partial<SessionInput>;
}

export function useKindWorker(kind: SessionKind) {
  const fx = useFakeProviderWorker(kind);
  return {
    get env() {
      return fx.env;
    },

    /** Opens a session of this kind with its own fake provider and starts its workflow. */
    async start(o: KindStart): Promise<KindRun> {
      const id = `ps_${randomUUID().slice(0, 8)}`;
      const provider = new FakeProvider();
      const t0 = await fx.env.currentTimeMs();
      const amount = o.amount ?? 5_000;
      provider.open(o.initial(id), t0, amount);
      fx.providers.set(id, provider);
      const input: SessionInput = {
        sessionId: id,
        kind,
        reference: `${kind}-${id}`,
        request: { money: { amount, currency: 'rub' } },
        start: o.start ?? { by: 'provider' },
        settings: mergeSettings(DEFAULT_SETTINGS, { ...QUIET, ...o.settings }),
        initialSnapshot: provider.stateAt(id, t0),
        ...o.input,
      };
      const handle = await fx.env.client.workflow.start(KINDS[kind].workflow, {
        workflowId: id,
        taskQueue: fx.taskQueue,
        args: [input],
      });
      return { id, provider, t0, handle };
    },

    /** Waits (in real time: nothing skips time here) until the session shows `phase`. */
    async reaches(handle: WorkflowHandle, phase: SessionPhase): Promise<void> {
      const until = Date.now() + 10_000;
      for (;;) {
        const view = await handle.query(sessionQuery);
        if (view.phase === phase) return;
        if (Date.now() > until) throw new Error(`${handle.workflowId} is ${view.phase}, never ${phase}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },

    /** The state the workflow completes with (time skips while it is awaited); bounded in real time. */
    async result(handle: WorkflowHandle): Promise<SessionState> {
      let timer: NodeJS.Timeout | undefined;
      const stuck = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${handle.workflowId} did not complete`)), 30_000);
      });
      try {
        return (await Promise.race([handle.result(), stuck])) as SessionState;
      } finally {
        clearTimeout(timer);
        fx.providers.delete(handle.workflowId);
      }
    },
  };
}

/** The types of the events a session announced, in order. */
export const announced = (provider: FakeProvider, id: string): string[] =>
  provider.events.filter((e) => e.session_id === id).map((e) => e.type);
