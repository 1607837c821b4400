/**
 * One-shot timers. Under the simulator they fire in virtual time, in a deterministic order.
 */
export interface TimerHandle {
  /** Cancels the timer; cancelling one that already fired or was cancelled does nothing. */
  cancel(): void;
}

export interface Timer {
  /**
   * Calls `callback` once, no earlier than `delayMs` later on this node's monotonic clock.
   * Timers due at the same instant fire in the order they were set.
   */
  setTimer(delayMs: number, callback: () => void): TimerHandle;
}
