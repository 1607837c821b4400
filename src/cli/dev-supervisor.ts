/**
 * What `conclave dev` does with its members once started: it restarts one that dies (with a
 * back-off, saying why), stops them all when asked, when its own parent dies or when its
 * stdin closes, and never leaves one behind: each member reads its stdin from dev
 * (`conclave server --stop-on-stdin-close`), so even a kill -9 of dev ends them.
 *
 * Stopping closes each member's stdin: a member then stops without handing its leadership
 * over (the whole cluster is stopping: a hand-over to members that are stopping too only
 * waits, which took Ctrl-C up to 5.6 s). A member still running STOP_KILL_AFTER_MS later is
 * killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, fstatSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIo } from './io.js';

export interface DevMember {
  readonly name: string;
  /** The arguments of `conclave server` after the bin path. */
  readonly args: readonly string[];
}

/**
 * The first restart's delay, doubled after each quick death up to RESTART_DELAY_MS_MAX.
 * Unit: ms. Why 200: long enough that a member failing at start does not spin the CPU, short
 * enough that a test's kill -9 sees it back within a second.
 */
export const RESTART_DELAY_MS_MIN = 200;
/** Why 10 s: a member that keeps failing is retried a few times a minute, its log says why. */
export const RESTART_DELAY_MS_MAX = 10_000;
/** A member that ran this long before dying starts again from the shortest delay. Unit: ms. */
export const RESTART_RESET_AFTER_MS = 30_000;
/** How long a member may take to stop after its stdin closed before SIGKILL. Unit: ms. Why
 * 2 s: a member without hand-over stops in tens of ms; this bounds a stuck disk. */
export const STOP_KILL_AFTER_MS = 2000;
/** How often dev checks that its parent still runs. Unit: ms. */
const PARENT_CHECK_INTERVAL_MS = 250;

interface Running {
  child: ChildProcess;
  startedAtMs: number;
}

export class DevSupervisor {
  private readonly running = new Map<string, Running>();
  private readonly delayMs = new Map<string, number>();
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  private stoppingValue = false;
  private stopped: Promise<void> | undefined;
  private parentTimer: NodeJS.Timeout | undefined;
  private markStopped: () => void = () => undefined;
  /** Resolves once stopAll() has ended every member. */
  readonly untilStopped = new Promise<void>((resolve) => (this.markStopped = resolve));

  constructor(private readonly io: CliIo, private readonly bin: string,
    private readonly dataDir: string) {}

  get stopping(): boolean {
    return this.stoppingValue;
  }

  /** Member name → pid of the process running now. */
  pids(): Record<string, number | null> {
    return Object.fromEntries([...this.running].map(([n, r]) => [n, r.child.pid ?? null]));
  }

  start(member: DevMember): void {
    const log = createWriteStream(join(this.dataDir, `${member.name}.log`),
      { flags: 'a', mode: 0o600 });
    // detached: a Ctrl-C at the terminal reaches dev only; dev decides how members stop.
    const child = spawn(process.execPath, [this.bin, ...member.args, '--stop-on-stdin-close'],
      { stdio: ['pipe', 'ignore', 'pipe'], detached: true });
    child.stderr?.pipe(log);
    child.stdin?.on('error', () => undefined); // a member that died: its pipe is gone
    this.running.set(member.name, { child, startedAtMs: performance.now() });
    child.once('exit', (code, signal) => this.onExit(member, child, code, signal));
  }

  private onExit(member: DevMember, child: ChildProcess, code: number | null,
    signal: NodeJS.Signals | null): void {
    const running = this.running.get(member.name);
    if (running?.child !== child) return;
    this.running.delete(member.name);
    if (this.stoppingValue) return;
    const ranMs = performance.now() - running.startedAtMs;
    const previous = this.delayMs.get(member.name);
    const delayMs = previous === undefined || ranMs > RESTART_RESET_AFTER_MS
      ? RESTART_DELAY_MS_MIN : Math.min(RESTART_DELAY_MS_MAX, previous * 2);
    this.delayMs.set(member.name, delayMs);
    this.io.err(`conclave dev: member ${member.name} exited (${signal ?? `code ${code}`}) after `
      + `${(ranMs / 1000).toFixed(1)} s; restarting in ${(delayMs / 1000).toFixed(1)} s; see `
      + join(this.dataDir, `${member.name}.log`));
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      if (this.stoppingValue) return;
      this.start(member);
      this.io.err(`conclave dev: member ${member.name} restarted (pid `
        + `${this.running.get(member.name)?.child.pid ?? '?'})`);
    }, delayMs);
    this.restartTimers.add(timer);
  }

  /**
   * Stops every member when dev's parent dies (dev is reparented) or when dev's stdin, a pipe
   * or socket, closes. A terminal's or /dev/null's stdin is left alone: /dev/null ends at once.
   */
  watchParentAndStdin(onGone: (why: string) => void): void {
    const parent = process.ppid;
    this.parentTimer = setInterval(() => {
      if (process.ppid !== parent) onGone(`its parent (pid ${parent}) exited`);
    }, PARENT_CHECK_INTERVAL_MS);
    this.parentTimer.unref();
    let piped = false;
    try {
      const stat = fstatSync(0);
      piped = stat.isFIFO() || stat.isSocket();
    } catch {
      // no stdin at all: nothing to watch
    }
    if (!piped) return;
    process.stdin.on('data', () => undefined);
    process.stdin.once('end', () => onGone('its stdin closed'));
  }

  /** Closes every member's stdin, SIGKILLs any still running STOP_KILL_AFTER_MS later. */
  stopAll(): Promise<void> {
    this.stoppingValue = true;
    this.stopped ??= (async () => {
      clearInterval(this.parentTimer);
      for (const timer of this.restartTimers) clearTimeout(timer);
      this.restartTimers.clear();
      await Promise.all([...this.running.values()].map(({ child }) => stopMember(child)));
      if (process.stdin.listenerCount('end') > 0) process.stdin.destroy();
      this.markStopped();
    })();
    return this.stopped;
  }
}

function stopMember(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const force = setTimeout(() => child.kill('SIGKILL'), STOP_KILL_AFTER_MS);
    child.once('exit', () => {
      clearTimeout(force);
      done();
    });
    child.stdin?.end();
  });
}
