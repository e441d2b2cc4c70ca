import { DefaultLogger, Runtime } from '@temporalio/worker';
import { CardDetails } from '../provider';
import { benchSettings, sandboxForApi, startBenchServer, startPaysaga } from './lib/stack';

export async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await startBenchServer();
  const bundle = await server.bundle('paysaga', require.resolve('../workflows'));
  const { sandbox, publicPort } = await sandboxForApi(server);
  const stack = await startPaysaga(server, {
    bundlePath: bundle,
    sandbox,
    publicPort,
    settings: benchSettings(),
  });
  try {
    const card = process.env.CARD ?? '4111111111111111';
    const t0 = Date.now();
    const s = await stack.payments.sessions.startCardCheckout(
      {
        reference: 'explore-1',
        amount: { amount: 1000, currency: 'RUB' },
        card: new CardDetails({
          card_number: card,
          card_exp_month: '12',
          card_exp_year: '30',
          card_code: '123',
        }),
        customer: { user_id: 'bench' },
      },
      { waitMs: 5000 },
    );
    console.log('phase', s.phase, Date.now() - t0, 'ms');
    await new Promise((r) => setTimeout(r, 3000));
    for await (const w of stack.temporal.workflow.list()) {
      const h = await stack.temporal.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
      const by: Record<string, number> = {};
      for (const e of h.events ?? []) {
        const t = String(e.eventType).replace('EVENT_TYPE_', '');
        by[t] = (by[t] ?? 0) + 1;
      }
      const acts = (h.events ?? [])
        .filter((e) => e.activityTaskScheduledEventAttributes)
        .map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
      const sigs = (h.events ?? [])
        .filter((e) => e.workflowExecutionSignaledEventAttributes)
        .map((e) => e.workflowExecutionSignaledEventAttributes!.signalName);
      const upd = (h.events ?? [])
        .filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)
        .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest!.input!.name);
      const timers = (h.events ?? [])
        .filter((e) => e.timerStartedEventAttributes)
        .map((e) => Number(e.timerStartedEventAttributes!.startToFireTimeout!.seconds));
      console.log(
        w.type,
        w.workflowId.slice(0, 30),
        w.status.name,
        (h.events ?? []).length,
        JSON.stringify(by),
      );
      if (process.env.FULL)
        console.log(
          (h.events ?? [])
            .map((e) => {
              const t = String(e.eventType);
              const a =
                e.activityTaskScheduledEventAttributes?.activityType?.name ??
                e.workflowExecutionSignaledEventAttributes?.signalName ??
                (e.timerStartedEventAttributes
                  ? String(e.timerStartedEventAttributes.startToFireTimeout?.seconds)
                  : '');
              return `${e.eventId}:${t}${a ? '(' + a + ')' : ''}@${(Number(e.eventTime?.nanos ?? 0) / 1e6) | 0}`;
            })
            .join(' '),
        );
      console.log(
        '   acts',
        acts.join(','),
        '| signals',
        sigs.join(','),
        '| updates',
        upd.join(','),
        '| timers',
        timers.join(','),
      );
    }
  } finally {
    await stack.close();
    await sandbox.close();
    await server.close();
  }
}
