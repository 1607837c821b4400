/**
 * Rate-limited warnings for rejected peer messages (`message-rejected` Raft events): a hostile
 * or broken peer can send thousands of frames a second, and one log line each would turn the
 * attack into a disk and CPU flood. At most `warnsPerWindowMax` lines per window name a
 * rejection each (reason, sender, kind, term); the rest are counted per reason, and one line
 * at the end of the window says how many of each were not logged.
 *
 * Runs on the ports (Clock, Timer, Logger), so the simulator can run it too.
 */
import type { RaftEvent, RejectionReason } from '../../core/raft/index.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { Timer, TimerHandle } from '../../ports/timer.js';

export type MessageRejectedEvent = Extract<RaftEvent, { kind: 'message-rejected' }>;

export interface RejectionLogConfig {
  /**
   * Lines naming one rejection each, per window; later rejections in the window are counted.
   * Unit: lines. Default: 5.
   * Trade-off: more shows more senders and kinds during an attack, and costs more log volume.
   */
  readonly warnsPerWindowMax: number;
  /**
   * The window. Unit: ms. Default: 1000 (so at most 6 lines a second, the summary included).
   */
  readonly windowMs: number;
}

export const REJECTION_LOG_DEFAULTS: RejectionLogConfig = Object.freeze({
  warnsPerWindowMax: 5,
  windowMs: 1000,
});

export interface RejectionLogComponents {
  readonly clock: Clock;
  readonly timer: Timer;
  readonly logger: Logger;
}

export class RejectionLog {
  private windowStartMs = Number.NEGATIVE_INFINITY;
  private warnsInWindow = 0;
  private readonly suppressed = new Map<RejectionReason, number>();
  private summaryTimer: TimerHandle | undefined;

  constructor(private readonly c: RejectionLogComponents,
    private readonly config: RejectionLogConfig = REJECTION_LOG_DEFAULTS) {}

  note(event: MessageRejectedEvent): void {
    const nowMs = this.c.clock.monotonicMs();
    if (nowMs - this.windowStartMs >= this.config.windowMs && this.summaryTimer === undefined) {
      this.windowStartMs = nowMs;
      this.warnsInWindow = 0;
    }
    if (this.warnsInWindow < this.config.warnsPerWindowMax) {
      this.warnsInWindow++;
      this.c.logger.warn({ reason: event.reason, from: event.from, messageKind: event.messageKind,
        term: event.term, count: event.count }, `peer message rejected: ${event.reason}`);
      return;
    }
    this.suppressed.set(event.reason, (this.suppressed.get(event.reason) ?? 0) + event.count);
    if (this.summaryTimer !== undefined) return;
    const leftMs = Math.max(0, this.windowStartMs + this.config.windowMs - nowMs);
    this.summaryTimer = this.c.timer.setTimer(leftMs, () => this.flush());
  }

  /** Logs what was suppressed (if anything) and cancels the pending summary. */
  stop(): void {
    this.summaryTimer?.cancel();
    this.flush();
  }

  private flush(): void {
    this.summaryTimer = undefined;
    if (this.suppressed.size === 0) return;
    const counts = Object.fromEntries(this.suppressed);
    const total = [...this.suppressed.values()].reduce((s, n) => s + n, 0);
    this.suppressed.clear();
    // The next rejection opens a new window.
    this.windowStartMs = Number.NEGATIVE_INFINITY;
    this.c.logger.warn({ suppressed: counts, windowMs: this.config.windowMs },
      `peer messages rejected: ${total} more not logged in this window`);
  }
}
