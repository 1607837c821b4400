/**
 * The real clock and timers. Monotonic time is `performance.now()` (never adjusted by NTP); a
 * zero-delay timer runs on `setImmediate`, after pending I/O, so a runtime can batch everything
 * that arrived in one event-loop turn without adding a millisecond of latency.
 */
import type { Clock } from '../ports/clock.js';
import type { Timer, TimerHandle } from '../ports/timer.js';

export class SystemClock implements Clock, Timer {
  monotonicMs(): number {
    return performance.now();
  }

  wallMs(): number {
    return Date.now();
  }

  setTimer(delayMs: number, callback: () => void): TimerHandle {
    if (delayMs <= 0) {
      const immediate = setImmediate(callback);
      return { cancel: () => clearImmediate(immediate) };
    }
    const timeout = setTimeout(callback, delayMs);
    return { cancel: () => clearTimeout(timeout) };
  }
}
