/**
 * A node's clock and timers in virtual time, with the node's own offset and rate drift: a node
 * whose drift is +0.01 sees 1,010 ms pass on its monotonic clock while 1,000 real (virtual) ms
 * pass, and its timers fire correspondingly early in real time.
 */
import { assert } from '../core/assert.js';
import type { Clock } from '../ports/clock.js';
import type { Timer, TimerHandle } from '../ports/timer.js';
import type { Scheduler } from './scheduler.js';

/** Wall clocks of simulated runs start here (2026-01-01T00:00:00Z), so logs read as dates. */
export const SIM_WALL_EPOCH_MS = 1_767_225_600_000;

export interface SimClockOptions {
  /** Rate error: local elapsed = real elapsed × (1 + driftRate). Unit: ratio. Bound: |x| < 0.5. */
  readonly driftRate: number;
  /** Initial monotonic reading. Unit: ms. */
  readonly monotonicOffsetMs: number;
  /** Initial wall-clock error against real time. Unit: ms. */
  readonly wallOffsetMs: number;
}

export class SimClock implements Clock, Timer {
  private originRealMs: number;
  private originLocalMs: number;
  private driftRateValue: number;
  private wallOffsetMs: number;
  /** Timers pending on this node; cancelled all at once when the node crashes. */
  private readonly pendingTimers = new Set<{ cancel(): void }>();

  constructor(private readonly scheduler: Scheduler, options: SimClockOptions) {
    assert(Math.abs(options.driftRate) < 0.5, () => `driftRate out of range: ${options.driftRate}`);
    this.originRealMs = scheduler.nowMs;
    this.originLocalMs = options.monotonicOffsetMs;
    this.driftRateValue = options.driftRate;
    this.wallOffsetMs = options.wallOffsetMs;
  }

  get driftRate(): number {
    return this.driftRateValue;
  }

  monotonicMs(): number {
    const realElapsedMs = this.scheduler.nowMs - this.originRealMs;
    return this.originLocalMs + realElapsedMs * (1 + this.driftRateValue);
  }

  wallMs(): number {
    return SIM_WALL_EPOCH_MS + this.scheduler.nowMs + this.wallOffsetMs;
  }

  /** Changes the rate from now on; the monotonic reading stays continuous. */
  setDriftRate(driftRate: number): void {
    assert(Math.abs(driftRate) < 0.5, () => `driftRate out of range: ${driftRate}`);
    this.originLocalMs = this.monotonicMs();
    this.originRealMs = this.scheduler.nowMs;
    this.driftRateValue = driftRate;
  }

  /** Steps the wall clock (as an NTP step or an operator would); monotonic time is unaffected. */
  jumpWall(deltaMs: number): void {
    this.wallOffsetMs += deltaMs;
  }

  setTimer(delayMs: number, callback: () => void): TimerHandle {
    assert(delayMs >= 0 && Number.isFinite(delayMs), () => `setTimer: bad delay ${delayMs}`);
    const realDelayMs = delayMs / (1 + this.driftRateValue);
    const entry = { cancel: () => undefined as void };
    const event = this.scheduler.schedule(realDelayMs, () => {
      this.pendingTimers.delete(entry);
      callback();
    });
    entry.cancel = () => {
      event.cancelled = true;
      this.pendingTimers.delete(entry);
    };
    this.pendingTimers.add(entry);
    return entry;
  }

  /** Cancels every pending timer (the process died). */
  cancelAllTimers(): void {
    for (const timer of [...this.pendingTimers]) timer.cancel();
  }
}
