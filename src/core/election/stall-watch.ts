/**
 * Detects that this process stopped running for a while (a GC pause, CPU starvation, SIGSTOP,
 * a suspended VM): Node's real failure mode for lease holders. The holder ticks it every
 * `tickIntervalMs` from a timer; a tick that arrives more than `stallMsMax` later than due
 * means the process was frozen at least that long, during which its lease may have run out
 * with no timer able to say so. A holder then gives up its leadership at once.
 */
import { assert } from '../assert.js';

export interface StallWatchConfig {
  /**
   * How often the holder ticks. Unit: ms. Default: 100. Why: short enough that a stall is
   * noticed within a tenth of a second of the process running again, long enough to cost
   * nothing measurable.
   */
  readonly tickIntervalMs: number;
  /**
   * The lateness that counts as a stall. Unit: ms. Default: the lease margin (the time the
   * holder keeps in reserve before its deadline), so a stall is reported before it can eat
   * the reserve.
   */
  readonly stallMsMax: number;
}

export type StallVerdict =
  | { readonly kind: 'ok' }
  | { readonly kind: 'stalled'; readonly lateMs: number };

export class StallWatch {
  private dueMs: number;

  constructor(private readonly config: StallWatchConfig, nowMs: number) {
    assert(config.tickIntervalMs > 0 && config.stallMsMax > 0,
      () => `StallWatch needs positive intervals: ${JSON.stringify(config)}`);
    this.dueMs = nowMs + config.tickIntervalMs;
  }

  /**
   * Says, without ticking, whether the process has already stalled: the next tick is overdue
   * by more than `stallMsMax` at `nowMs`. A holder's own timer can run before the tick timer
   * after a pause; this lets its "still held?" check see the stall first.
   */
  overdue(nowMs: number): StallVerdict {
    const lateMs = nowMs - this.dueMs;
    return lateMs > this.config.stallMsMax ? { kind: 'stalled', lateMs } : { kind: 'ok' };
  }

  /** Called by the tick timer; says whether this tick came too late. */
  tick(nowMs: number): StallVerdict {
    const lateMs = nowMs - this.dueMs;
    this.dueMs = nowMs + this.config.tickIntervalMs;
    return lateMs > this.config.stallMsMax ? { kind: 'stalled', lateMs } : { kind: 'ok' };
  }
}
