/**
 * The faults of the plan, carried out on time: each fault window is added to the sandbox's rules with its
 * `forMs` (the sandbox ends it by itself, POST /sandbox/faults/add), and each disruption kills or stops a
 * process of the stack and starts it again. What happened, and when, is logged for the report.
 */
import type { FaultWindow, Disruption, Plan } from './plan';
import type { Stack } from './stack';

export interface WindowLog {
  window: FaultWindow;
  /** ms after the start when the sandbox took the rules. */
  appliedAtMs?: number;
  error?: string;
}

export interface DisruptionLog {
  disruption: Disruption;
  startedAtMs?: number;
  /** From the signal until the new process (or server) was ready. */
  downMs?: number;
  error?: string;
}

export interface OutageLog {
  atMs: number;
  forMs: number;
  /** ms after the start when the store went down, and how long until it answered again. */
  startedAtMs?: number;
  downMs?: number;
  error?: string;
}

export interface ChaosLog {
  windows: WindowLog[];
  disruptions: DisruptionLog[];
  storeOutage?: OutageLog;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

export async function runChaos(
  plan: Plan,
  stack: Stack,
  startedAt: number,
  log: (message: string) => void,
): Promise<ChaosLog> {
  const since = () => Date.now() - startedAt;
  const windows = plan.faults.map((window): WindowLog => ({ window }));
  const disruptions = plan.disruptions.map((disruption): DisruptionLog => ({ disruption }));

  const openWindow = async (w: WindowLog) => {
    await sleep(startedAt + w.window.atMs - Date.now());
    try {
      const res = await fetch(`${stack.sandboxUrl}/sandbox/faults/add`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules: w.window.rules }),
        signal: AbortSignal.timeout(10_000),
      });
      if (res.status !== 200) throw new Error(`sandbox answered ${res.status}: ${await res.text()}`);
      w.appliedAtMs = since();
      log(`fault ${w.window.id} on for ${Math.round(w.window.forMs / 1000)} s`);
    } catch (err) {
      w.error = (err as Error).message;
      log(`fault ${w.window.id} NOT applied: ${w.error}`);
    }
  };

  // The store's outage runs beside the rest; a store crash waits for it to end (it would be no crash).
  const storeOutage: OutageLog | undefined = plan.storeOutage && { ...plan.storeOutage };
  let outageOver: Promise<void> = Promise.resolve();
  const outage = async (o: OutageLog) => {
    await sleep(startedAt + o.atMs - Date.now());
    const began = Date.now();
    o.startedAtMs = since();
    try {
      await stack.store.down('fast');
      log(`store DOWN for ${Math.round(o.forMs / 1000)} s`);
      await sleep(began + o.forMs - Date.now());
      await stack.store.up();
      o.downMs = Date.now() - began;
      log(`store back after ${(o.downMs / 1000).toFixed(1)} s`);
    } catch (err) {
      o.error = (err as Error).message;
      log(`store outage FAILED: ${o.error}`);
    }
  };
  if (storeOutage) outageOver = outage(storeOutage);

  // Disruptions one after another (the plan spaces them), each on time or as soon as the last is over.
  const disrupt = async () => {
    for (const d of disruptions) {
      await sleep(startedAt + d.disruption.atMs - Date.now());
      const { what, target, signal } = d.disruption;
      const began = Date.now();
      d.startedAtMs = since();
      try {
        if (what === 'worker_kill') await stack.workers[target]!.restart('SIGKILL');
        else if (what === 'api_restart') await stack.apis[target]!.restart(signal);
        else if (what === 'store_restart') {
          await outageOver;
          await stack.store.down('immediate');
          await stack.store.up();
        } else await stack.restartTemporal();
        d.downMs = Date.now() - began;
        log(
          `${what} ${what === 'temporal_restart' || what === 'store_restart' ? '' : `#${target + 1} `}(${signal}): back in ${d.downMs} ms`,
        );
      } catch (err) {
        d.error = (err as Error).message;
        log(`${what} #${target + 1} FAILED: ${d.error}`);
      }
    }
  };

  await Promise.all([...windows.map(openWindow), disrupt(), outageOver]);
  return { windows, disruptions, storeOutage };
}
