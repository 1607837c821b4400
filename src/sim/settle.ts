/**
 * Running promise code between simulated events. The shipped client is async: what follows an
 * answer or a timer is a promise reaction (a microtask), which JavaScript runs only when the
 * current macrotask is over. In a real process every timer callback and every arriving message
 * is a macrotask of its own, and all the reactions it started run before the next one. The
 * simulator keeps that rule: after each event in which simulated client code ran (`mark()`),
 * it waits for `settle()` before it runs the next event.
 *
 * `settle()` is a macrotask boundary (Node drains the whole microtask queue, and every reaction
 * queued meanwhile, before it runs the next macrotask). It reads no time and orders nothing:
 * the order of the reactions is JavaScript's own, the same on every run, so a seed still
 * replays exactly. (tidy allows this one timer in src/sim, for this reason.)
 */
import type { Scheduler } from './scheduler.js';

/**
 * Node's setImmediate, declared here as maybe absent: the dashboard's sim worker type-checks
 * this file without Node's types, and a browser has none (a zero timeout is the same boundary).
 */
declare const setImmediate: ((run: () => void) => unknown) | undefined;

/** Resolves once every promise reaction queued so far, and every one they queue, has run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof setImmediate === 'function') setImmediate(resolve);
    else setTimeout(resolve, 0);
  });
}

/** Runs a scheduler's events, settling promise reactions after those that started some. */
export class SettleGate {
  private dirty = true;
  /** Events after which the gate settled. */
  settles = 0;

  constructor(private readonly scheduler: Scheduler) {}

  /** Simulated async code ran (a client's timer fired, a message reached it): settle after. */
  mark(): void {
    this.dirty = true;
  }

  /** Settles now if anything asynchronous may be pending. */
  async settleIfMarked(): Promise<void> {
    while (this.dirty) {
      this.dirty = false;
      this.settles++;
      await settle();
    }
  }

  /**
   * As `Scheduler.runUntil`, settling after every marked event: runs events until virtual time
   * would pass `untilMs` (then sets the time to `untilMs`) or `stop()` holds after an event.
   * True when stopped by `stop`.
   */
  async runUntil(untilMs: number, stop?: () => boolean): Promise<boolean> {
    await this.settleIfMarked();
    for (;;) {
      if (stop?.() === true) return true;
      const nextAtMs = this.scheduler.nextAtMs;
      if (nextAtMs === undefined || nextAtMs > untilMs) break;
      if (!this.scheduler.step()) break;
      await this.settleIfMarked();
    }
    this.scheduler.runUntil(untilMs); // no event left before untilMs: just moves the time
    return false;
  }
}
