/**
 * What a member's start spends its time on, in its log at info level, so that a slow restart
 * can be taken apart (bench soak reads these lines): `snapshot loaded N bytes in M ms` (the
 * newest snapshot decoded into the store), `replayed K entries in M ms` (the log entries after
 * it, up to the commit index found on disk, applied again), then `ready` (a leader is known
 * and everything found committed is applied: the member can serve). Each line carries `atMs`,
 * the member's monotonic clock, which the server's clock starts at the process's start, so
 * the time before the first line is Node's start and module loading (the server logs
 * `wal opened` before these, with the time reading the data dir took).
 */
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';

export class StartupTimeline {
  /** The commit index found on disk: applying up to it is the replay. */
  private replayTargetIndex = 0;
  private replayFromIndex = 0;
  private replayStartMs: number | undefined;
  private replayed = false;
  private ready = false;

  constructor(private readonly clock: Clock, private readonly logger: Logger) {}

  /** The store was restored from the snapshot found on disk (`ms`: the decode). */
  snapshotLoaded(sizeBytes: number, ms: number): void {
    this.logger.info({ sizeBytes, ms: Math.round(ms), atMs: Math.round(this.clock.monotonicMs()) },
      `snapshot loaded ${sizeBytes} bytes in ${Math.round(ms)} ms`);
  }

  /** What recovery found: applied up to `appliedIndex` (the snapshot), committed up to more. */
  recovered(appliedIndex: number, commitIndex: number): void {
    this.replayFromIndex = appliedIndex;
    this.replayTargetIndex = Math.max(appliedIndex, commitIndex);
    if (this.replayTargetIndex === appliedIndex) this.replayDone(appliedIndex);
  }

  /** Both lines are logged: nothing more to watch. */
  get done(): boolean {
    return this.ready;
  }

  /**
   * A normal entry was applied (one comparison once the replay is over). True when it ended
   * the replay: poll then, for `ready`.
   */
  applied(index: number): boolean {
    if (this.replayed) return false;
    this.replayStartMs ??= this.clock.monotonicMs();
    if (index < this.replayTargetIndex) return false;
    this.replayDone(index);
    return true;
  }

  /**
   * The node's applied index (the replay also ends on an entry the store never sees: a no-op,
   * a config entry) and whether it knows a leader: logs `ready` once both hold.
   */
  poll(appliedIndex: number, leaderKnown: boolean): void {
    if (this.ready) return;
    if (!this.replayed && appliedIndex >= this.replayTargetIndex) this.replayDone(appliedIndex);
    if (!this.replayed || !leaderKnown) return;
    this.ready = true;
    this.logger.info({ atMs: Math.round(this.clock.monotonicMs()) }, 'ready');
  }

  private replayDone(index: number): void {
    this.replayed = true;
    const entries = index - this.replayFromIndex;
    const nowMs = this.clock.monotonicMs();
    const ms = Math.round(nowMs - (this.replayStartMs ?? nowMs));
    this.logger.info({ entries, ms, atMs: Math.round(nowMs) },
      `replayed ${entries} entries in ${ms} ms`);
  }
}
