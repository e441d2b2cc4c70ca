/** Signal-driven shutdown of a server a CLI command runs until SIGINT/SIGTERM (`paysaga api`, `paysaga sandbox`). */

/** The process seams, replaceable so a test can run a command in-process and "send" it a signal. */
export interface ServerCommandDeps {
  signals: Pick<NodeJS.EventEmitter, 'once' | 'removeListener'>;
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * Waits for SIGINT or SIGTERM, then closes the server, saying so on `deps.err` as `<name>: ...`.
 * A second signal while closing means "now": the process exits 1 without waiting for in-flight work.
 */
export async function closeOnSignal(
  name: string,
  deps: ServerCommandDeps,
  close: () => Promise<void>,
): Promise<void> {
  const signal = await new Promise<string>((resolve) => {
    const on = (sig: string) => () => {
      deps.signals.removeListener('SIGINT', onInt);
      deps.signals.removeListener('SIGTERM', onTerm);
      resolve(sig);
    };
    const onInt = on('SIGINT');
    const onTerm = on('SIGTERM');
    deps.signals.once('SIGINT', onInt);
    deps.signals.once('SIGTERM', onTerm);
  });
  deps.err(`${name}: ${signal}, shutting down`);
  const force = () => {
    deps.err(`${name}: forced exit`);
    process.exit(1);
  };
  deps.signals.once('SIGINT', force);
  deps.signals.once('SIGTERM', force);
  try {
    await close();
  } finally {
    deps.signals.removeListener('SIGINT', force);
    deps.signals.removeListener('SIGTERM', force);
  }
  deps.err(`${name}: stopped`);
}
