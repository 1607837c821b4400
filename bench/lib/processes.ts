/**
 * Every process a benchmark run starts goes through one ProcessGroup, so that the run can stop
 * all of them by pid on any exit path (normal end, error, Ctrl-C) and read their CPU time.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as net from 'node:net';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (getconf CLK_TCK; 100 on Linux). */
const CLOCK_TICKS_PER_S = readClockTicksPerS();

export interface TrackedProcess {
  readonly label: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves when the process has exited (for any reason). */
  readonly exited: Promise<void>;
}

export class ProcessGroup {
  private readonly live = new Set<TrackedProcess>();
  /** Processes this group froze with SIGSTOP and has not resumed yet. */
  private readonly paused = new Set<TrackedProcess>();

  spawn(label: string, command: string, args: readonly string[],
    options: SpawnOptions): TrackedProcess {
    const child = spawn(command, args, options);
    if (child.pid === undefined) throw new Error(`could not start ${label}: ${command}`);
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve());
    });
    const tracked: TrackedProcess = { label, child, pid: child.pid, exited };
    this.live.add(tracked);
    void exited.then(() => {
      this.live.delete(tracked);
      this.paused.delete(tracked);
    });
    return tracked;
  }

  /** kill -9 by pid; resolves once the process is gone. */
  async kill9(tracked: TrackedProcess): Promise<void> {
    if (this.live.has(tracked)) process.kill(tracked.pid, 'SIGKILL');
    await tracked.exited;
  }

  /** SIGSTOP by pid: the process freezes, its sockets stay open (a silent member). */
  pause(tracked: TrackedProcess): void {
    if (!this.live.has(tracked)) return;
    signal(tracked.pid, 'SIGSTOP');
    this.paused.add(tracked);
  }

  /** SIGCONT by pid: a paused process runs again. */
  resume(tracked: TrackedProcess): void {
    if (!this.paused.delete(tracked)) return;
    signal(tracked.pid, 'SIGCONT');
  }

  /** SIGTERM, then SIGKILL after `graceMs`: a clean stop where the process allows one. */
  async stop(tracked: TrackedProcess, graceMs: number): Promise<void> {
    if (!this.live.has(tracked)) return;
    signal(tracked.pid, 'SIGTERM');
    // A frozen process would leave SIGTERM pending until the SIGKILL: let it act on it now.
    this.resume(tracked);
    const force = setTimeout(() => signal(tracked.pid, 'SIGKILL'), graceMs);
    await tracked.exited;
    clearTimeout(force);
  }

  /** Stops every process still running, each by its pid. */
  async stopAll(graceMs: number): Promise<void> {
    await Promise.all([...this.live].map((tracked) => this.stop(tracked, graceMs)));
  }

  /** Synchronous last resort for process exit handlers: SIGKILL to every pid still running. */
  killAllNow(): void {
    for (const tracked of this.live) signal(tracked.pid, 'SIGKILL');
  }

  get size(): number {
    return this.live.size;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone: nothing to stop.
  }
}

/** CPU time (user + system) a process has used so far, or undefined once it is gone. Unit: ms. */
export function cpuMsOf(pid: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // After ')' field 3 (state) is index 0, so utime (field 14) is index 11 and stime index 12.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Number.isFinite(ticks) ? (ticks * 1000) / CLOCK_TICKS_PER_S : undefined;
}

function readClockTicksPerS(): number {
  const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const ticks = Number(result.stdout?.trim());
  return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
}

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `count` distinct free ports. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it returns a value; throws naming `what` after `deadlineMs`. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, deadlineMs: number,
  what: string, pollMs = 25): Promise<T> {
  const endMs = performance.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > endMs) {
      throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    }
    await sleep(pollMs);
  }
}
