/**
 * Carries out what the session's reducer asks of the world (`Effect`), each at once and in order: search
 * attributes and outbound events go to the recorder (written when the session comes to rest), a warning
 * to the worker's log, the metric of sessions needing attention, and the signal that tells a charge's
 * subscription its result.
 */
import * as wf from '@temporalio/workflow';
import { sessionSettledSignal } from '../../common/messages';
import type { Effect } from './reducer';
import type { SessionRecorder } from './recorder';

export class SessionAnnouncer {
  constructor(
    private readonly sessionId: string,
    private readonly recorder: SessionRecorder,
    /** The subscription whose charge this session is (told the result at once). */
    private readonly notify: string | undefined,
  ) {}

  perform(effect: Effect): void {
    switch (effect.kind) {
      case 'search':
        this.recorder.show(effect.attributes);
        return;
      case 'event':
        this.recorder.announce(effect.event);
        return;
      case 'warn':
        wf.log.warn(effect.message, effect.fields);
        return;
      case 'attention':
        wf.metricMeter.createCounter('paysaga_sessions_needing_attention_total').add(1);
        return;
      case 'settled':
        // The subscription also reads the provider itself: a lost signal delays it, never misleads it.
        if (this.notify)
          void wf
            .getExternalWorkflowHandle(this.notify)
            .signal(sessionSettledSignal, {
              sessionId: this.sessionId,
              phase: effect.phase,
              ...(effect.reason ? { reason: effect.reason } : {}),
            })
            .catch(() => undefined);
        return;
    }
  }
}
