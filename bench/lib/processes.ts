/**
 * paysaga processes (`api`, `worker`, `sandbox`) started from the TypeScript sources of any checkout of
 * paysaga (`root`: this worktree, or an older commit checked out elsewhere), with lib/probe.js preloaded:
 * it counts the Temporal calls each HTTP request makes and reads memory after a full GC, over IPC.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { request } from 'undici';
import { freePort as freePortOn } from '../../cli/dev/ports';
import { redactPans } from '../../provider/schemas/card';

const PROBE = path.resolve(__dirname, 'probe.js');

/** One HTTP request the process served and the Temporal calls (gRPC method names) it made meanwhile. */
export interface ServedRequest {
  method: string;
  path: string;
  query: string;
  status?: number;
  calls: string[];
}

/** A worker thread of the process (its title, e.g. `[worker 2]`, and script) and its V8 heap, bytes. */
export interface ThreadHeap {
  title: string;
  url: string;
  usedSize: number;
  totalSize: number;
}

/** The main thread's event-loop delay (monitorEventLoopDelay) and GC pauses over a span (lib/probe.js). */
export interface LoopReport {
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  gcCount: number;
  gcTotalMs: number;
  gcMaxMs: number;
}

export interface ProbedProcess {
  child: ChildProcess;
  pid: number;
  /** stdout and stderr so far (card-like digit runs blanked). */
  output(): string;
  /** Requests finished since the last call, and calls made outside any request (emptied). */
  calls(): Promise<{ requests: ServedRequest[]; outside: Record<string, number> }>;
  /** process.memoryUsage() after a full GC. */
  memory(): Promise<NodeJS.MemoryUsage>;
  /** Each worker thread's V8 heap after a full GC in it (the workflow thread, the embedded store's). */
  threads(): Promise<ThreadHeap[]>;
  /** How long its event loop was held up, and its main thread's GC pauses, since the last call. */
  loop(): Promise<LoopReport>;
  /** Resolves once `text` appears in the output; rejects if the process exits first or after `ms`. */
  waitForOutput(text: string, ms?: number): Promise<void>;
  /** SIGTERM, then SIGKILL after 10 s. */
  stop(): Promise<void>;
}

const blankDigits = redactPans;

/** `node --expose-gc -r probe.js <root>/cli/main.ts <args>` with `env` over this process's environment. */
export function startProbed(root: string, args: string[], env: Record<string, string>): ProbedProcess {
  const child = fork(path.join(root, 'cli', 'main.ts'), args, {
    cwd: root,
    // BENCH_CHILD_CPU_PROF=<dir>: a CPU profile of each of its threads in <dir> when it exits.
    execArgv: [
      '--expose-gc',
      '-r',
      PROBE,
      ...(process.env.BENCH_CHILD_CPU_PROF
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CHILD_CPU_PROF}`]
        : []),
    ],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    // A group of its own: `paysaga dev` starts the Temporal dev server as its child, and a dev process
    // that does not stop in time is killed with that child (it outlived failed runs and loaded the next).
    detached: true,
  });
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', killGroup);
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-200_000)));
  child.stderr!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-200_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ask = <T>(type: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = randomUUID();
      const timer = setTimeout(() => reject(new Error(`no answer to ${type} from pid ${child.pid}`)), 60_000);
      const onMessage = (m: { id?: string } & T) => {
        if (m.id !== id) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(m);
      };
      child.on('message', onMessage);
      child.send({ type, id });
    });
  return {
    child,
    pid: child.pid!,
    output: () => blankDigits(out),
    calls: () => ask('calls'),
    memory: async () => (await ask<{ memory: NodeJS.MemoryUsage }>('memory')).memory,
    loop: async () => (await ask<{ loop: LoopReport }>('loop')).loop,
    async threads() {
      const answer = await ask<{ threads: ThreadHeap[]; error?: string }>('threads');
      if (answer.error) throw new Error(`pid ${child.pid}: no thread heaps: ${answer.error}`);
      return answer.threads;
    },
    async waitForOutput(text, ms = 120_000) {
      const deadline = Date.now() + ms;
      while (!out.includes(text)) {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`${args[0]} exited before "${text}":\n${blankDigits(out).slice(-4000)}`);
        if (Date.now() > deadline)
          throw new Error(`${args[0]}: no "${text}" within ${ms} ms:\n${blankDigits(out).slice(-4000)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(killGroup, 10_000);
      await exited;
      clearTimeout(timer);
      process.off('exit', killGroup);
    },
  };
}

/** A port free on 127.0.0.1 right now (for a process that must be told its port before it starts). */
export function freePort(): Promise<number> {
  return freePortOn('127.0.0.1');
}

/** Waits until `url` answers at all (any status), at most `ms`. */
export async function waitForHttp(url: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const res = await request(url, { headersTimeout: 5_000, bodyTimeout: 5_000 });
      await res.body.dump();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${ms} ms`, { cause: err });
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** RSS of a process from /proc (Linux), in bytes. */
export function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? NaN);
  return kb * 1024;
}

/** CPU time (user + system) a process has used so far, from /proc (Linux), in ms. */
export function cpuMsOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** Ids of this process's children whose command name starts with `name` (e.g. the dev server). */
export function childPidsNamed(name: string): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && comm.startsWith(name)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
