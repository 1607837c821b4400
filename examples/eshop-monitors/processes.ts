/**
 * The scenario runner's processes and what they say. Every process a run starts goes through
 * one `ProcessGroup`, so the run stops each of them by pid on every way out (the end, an error,
 * Ctrl-C); the services, which the supervisor starts, are adopted by pid as the supervisor
 * reports them. Every event line they print lands in one `EventLog`, which scenarios wait on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseEventLine, type EshopEvent } from './events.js';

export interface TrackedProcess {
  readonly label: string;
  readonly pid: number;
  /** Undefined for adopted processes (started by someone else). */
  readonly child: ChildProcess | undefined;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** The end of what it wrote on stderr, for error messages. */
  readonly stderrTail: () => string;
  /** How it ended ('code 1', 'SIGKILL'), once it has; undefined while it runs. */
  readonly ending: () => string | undefined;
}

/** Largest stderr tail kept per process. Unit: characters. */
const STDERR_TAIL_MAX = 4000;

/** How often an adopted process (no exit event) is checked for having gone. Unit: ms. */
const ADOPTED_POLL_MS = 50;

export class ProcessGroup {
  private readonly live = new Set<TrackedProcess>();
  private readonly spawned: TrackedProcess[] = [];

  constructor(private readonly events: EventLog) {}

  /** Starts a process whose stdout lines are events; its stdin is a pipe (see watchParent). */
  spawn(label: string, command: string, args: readonly string[]): TrackedProcess {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    if (child.pid === undefined) throw new Error(`could not start ${label}`);
    let tail = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-STDERR_TAIL_MAX);
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const event = parseEventLine(line);
      if (event !== undefined) this.events.add(event);
    });
    child.stdin?.on('error', () => undefined); // the child may be gone when we write
    let ending: string | undefined;
    const exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        ending = signal ?? `code ${code}`;
        resolve();
      });
      child.once('error', (error) => {
        ending = String(error);
        resolve();
      });
    });
    const tracked: TrackedProcess = { label, pid: child.pid, child, exited,
      stderrTail: () => tail, ending: () => ending };
    this.spawned.push(tracked);
    this.track(tracked);
    return tracked;
  }

  /** Takes over stopping a process someone else started (a service, by the supervisor). */
  adopt(label: string, pid: number): TrackedProcess {
    const exited = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (processState(pid) !== undefined) return;
        clearInterval(timer);
        resolve();
      }, ADOPTED_POLL_MS);
      timer.unref();
    });
    const tracked: TrackedProcess = { label, pid, child: undefined, exited,
      stderrTail: () => '', ending: () => undefined };
    this.track(tracked);
    return tracked;
  }

  /** Sends a signal by pid (nothing if the process is gone). */
  signal(tracked: TrackedProcess, name: NodeJS.Signals): void {
    if (this.live.has(tracked)) sendSignal(tracked.pid, name);
  }

  /** Writes one command line to the process's stdin. */
  send(tracked: TrackedProcess, line: string): void {
    tracked.child?.stdin?.write(`${line}\n`);
  }

  async kill9(tracked: TrackedProcess): Promise<void> {
    this.signal(tracked, 'SIGKILL');
    await tracked.exited;
  }

  /**
   * Stops every process still running: SIGCONT first (a stopped process cannot act on
   * SIGTERM), SIGTERM, then SIGKILL after `graceMs`.
   */
  async stopAll(graceMs: number): Promise<void> {
    await Promise.all([...this.live].map(async (tracked) => {
      sendSignal(tracked.pid, 'SIGCONT');
      sendSignal(tracked.pid, tracked.child === undefined ? 'SIGKILL' : 'SIGTERM');
      const force = setTimeout(() => sendSignal(tracked.pid, 'SIGKILL'), graceMs);
      await tracked.exited;
      clearTimeout(force);
    }));
  }

  /**
   * The processes that exited on their own with a failure (not killed by the run), with the
   * end of their stderr: what a failed run's error message needs.
   */
  failures(): string[] {
    return this.spawned.filter((p) => p.ending()?.startsWith('code ') === true
      && p.ending() !== 'code 0').map((p) => `${p.label} exited (${p.ending()}): `
      + `${p.stderrTail().trim().slice(-500)}`);
  }

  /** Synchronous last resort (process 'exit' handlers): SIGKILL to every pid still running. */
  killAllNow(): void {
    for (const tracked of this.live) sendSignal(tracked.pid, 'SIGKILL');
  }

  private track(tracked: TrackedProcess): void {
    this.live.add(tracked);
    void tracked.exited.then(() => this.live.delete(tracked));
  }
}

/** The state letter of /proc/<pid>/stat ('T': stopped), or undefined once the pid is gone. */
export function processState(pid: number): string | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces: the state follows the last ')'.
  const state = text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X' ? undefined : state;
}

function sendSignal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Every event of a run, in arrival order, with waiting on a condition. */
export class EventLog {
  readonly events: EshopEvent[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly listeners: ((event: EshopEvent) => void)[] = [];

  /** Calls `listener` with every event added from now on. */
  subscribe(listener: (event: EshopEvent) => void): void {
    this.listeners.push(listener);
  }

  add(event: EshopEvent): void {
    this.events.push(event);
    for (const listener of this.listeners) listener(event);
    for (const wake of [...this.waiters]) wake();
  }

  /**
   * Resolves with the first event (from index `from` on) that `matches`; rejects after
   * `deadlineMs` naming `what`, or when `signal` aborts.
   */
  waitFor(matches: (event: EshopEvent) => boolean, what: string,
    options: { readonly deadlineMs: number; readonly from?: number;
      readonly signal?: AbortSignal }): Promise<EshopEvent> {
    let index = options.from ?? 0;
    return new Promise<EshopEvent>((resolve, reject) => {
      const finish = (error: Error | undefined, event?: EshopEvent): void => {
        this.waiters.delete(check);
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (error !== undefined) reject(error);
        else resolve(event!);
      };
      const check = (): void => {
        for (; index < this.events.length; index++) {
          const event = this.events[index]!;
          if (matches(event)) return finish(undefined, event);
        }
      };
      const onAbort = (): void => finish(new Error(`stopped while waiting for ${what}`));
      const timer = setTimeout(() => finish(new Error(
        `timed out after ${options.deadlineMs} ms waiting for ${what}`)), options.deadlineMs);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(check);
      if (options.signal?.aborted === true) onAbort();
      else check();
    });
  }
}
