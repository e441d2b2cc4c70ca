import type { SessionSettings } from '../workflows/types';

/** Defaults for production-like timing; tests and the demo pass shorter ones. */
export const DEFAULT_SETTINGS: SessionSettings = {
  approval: { mode: 'auto' },
  finalization: { mode: 'auto' },
  polling: { webhooks: true, lateAfterMs: 30_000, initialMs: 2_000, maxMs: 60_000, factor: 2 },
  deadlines: { payerActionMs: 15 * 60_000, sessionMs: 24 * 3_600_000, startMs: 5 * 60_000 },
};

export interface SettingsOverrides {
  approval?: SessionSettings['approval'];
  finalization?: SessionSettings['finalization'];
  polling?: Partial<SessionSettings['polling']>;
  deadlines?: Partial<SessionSettings['deadlines']>;
}

export function mergeSettings(base: SessionSettings, o: SettingsOverrides = {}): SessionSettings {
  return {
    approval: o.approval ?? base.approval,
    finalization: o.finalization ?? base.finalization,
    polling: { ...base.polling, ...o.polling },
    deadlines: { ...base.deadlines, ...o.deadlines },
  };
}
