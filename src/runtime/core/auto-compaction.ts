/**
 * Automatic history compaction on the leader, with etcd's two modes
 * (`--auto-compaction-mode`, `--auto-compaction-retention`):
 *
 * - `revision`: every `revisionCheckIntervalMs` (5 minutes, as etcd), compact to the current
 *   revision minus `retention`: the newest `retention` revisions stay readable and watchable.
 * - `periodic`: keep `retention` ms of history. The current revision is sampled every tenth of
 *   the compaction interval, where the interval is `retention`, or one hour when the retention
 *   is longer; once the oldest sample is `retention` old, and then every interval, compact to
 *   the revision sampled `retention` ago (the oldest sample kept).
 *
 * Only the leader compacts, through the log (a `compact` command, stamped with this member's
 * own client id and the target revision as its sequence, so a retry is answered from the
 * idempotency table); a follower that becomes leader starts over. Watches and reads below the
 * compact revision are answered `compacted`, as after `conclave compact`.
 */
import type { Clock } from '../../ports/clock.js';
import type { Timer, TimerHandle } from '../../ports/timer.js';
import type { ConfigProblem } from '../../core/config.js';

export interface AutoCompactionConfig {
  /** `periodic`: keep `retention` ms of history; `revision`: keep `retention` revisions. */
  readonly mode: 'periodic' | 'revision';
  /**
   * What to keep. Unit: ms in `periodic` mode, revisions in `revision` mode. 0 turns automatic
   * compaction off (etcd's default). Trade-off: a longer retention lets watchers that were away
   * longer resume, and reads at older revisions; the history's own bounds
   * (`KvStoreConfig.historyEventsMax` and `historyBytesMax`) still apply.
   */
  readonly retention: number;
  /**
   * `revision` mode: how often the leader checks. Unit: ms. Default: 300 000 (etcd's 5 minutes).
   */
  readonly revisionCheckIntervalMs: number;
}

export const AUTO_COMPACTION_OFF: AutoCompactionConfig = Object.freeze({
  mode: 'periodic', retention: 0, revisionCheckIntervalMs: 300_000,
});

const HOUR_MS = 3_600_000;
/** Periodic mode samples the revision this many times per compaction interval (etcd: 10). */
const SAMPLES_PER_INTERVAL = 10;

export function validateAutoCompactionConfig(config: AutoCompactionConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (config.mode !== 'periodic' && config.mode !== 'revision') {
    problems.push({ field: 'autoCompaction.mode', value: config.mode,
      rule: 'must be periodic or revision' });
  }
  if (!Number.isSafeInteger(config.retention) || config.retention < 0) {
    problems.push({ field: 'autoCompaction.retention', value: config.retention,
      rule: 'must be an integer >= 0 (ms in periodic mode, revisions in revision mode)' });
  }
  const checkMs = config.revisionCheckIntervalMs;
  if (!Number.isSafeInteger(checkMs) || checkMs < 1) {
    problems.push({ field: 'autoCompaction.revisionCheckIntervalMs', value: checkMs,
      rule: 'must be an integer >= 1 (ms)' });
  }
  return problems;
}

export interface AutoCompactionComponents {
  readonly clock: Clock;
  readonly timer: Timer;
  /** The store's revision and compact revision now. */
  readonly revision: () => number;
  readonly compactRevision: () => number;
  /** Proposes a compaction to `revision`; `done` once it ended, however it ended. */
  readonly compact: (revision: number, done: () => void) => void;
}

export class AutoCompactor {
  private timer: TimerHandle | undefined;
  /** Periodic mode: revisions sampled in this leadership, oldest first. */
  private samples: number[] = [];
  /** Periodic mode: when this leadership began, or last compacted. Unit: ms (monotonic). */
  private lastCompactionMs = 0;
  private compactedOnce = false;
  private inFlight = false;

  constructor(private readonly config: AutoCompactionConfig,
    private readonly c: AutoCompactionComponents) {}

  get enabled(): boolean {
    return this.config.retention > 0;
  }

  /** This member leads from now on: start (over). */
  becomeLeader(): void {
    this.stop();
    if (!this.enabled) return;
    this.samples = [];
    this.lastCompactionMs = this.c.clock.monotonicMs();
    this.compactedOnce = false;
    this.tick();
  }

  /** This member no longer leads (or stops). */
  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private tick(): void {
    const { mode, retention, revisionCheckIntervalMs } = this.config;
    if (mode === 'revision') {
      this.maybeCompact(this.c.revision() - retention);
      return this.arm(revisionCheckIntervalMs);
    }
    const intervalMs = Math.min(retention, HOUR_MS);
    const sampleMs = Math.max(1, Math.floor(intervalMs / SAMPLES_PER_INTERVAL));
    this.samples.push(this.c.revision());
    // Once full, samples[0] was taken `retention` ago.
    const kept = Math.floor(retention / sampleMs) + 1;
    if (this.samples.length > kept) this.samples.splice(0, this.samples.length - kept);
    const nowMs = this.c.clock.monotonicMs();
    const waitMs = this.compactedOnce ? intervalMs : retention;
    if (this.samples.length === kept && nowMs - this.lastCompactionMs >= waitMs) {
      this.maybeCompact(this.samples[0] as number);
      this.lastCompactionMs = nowMs;
      this.compactedOnce = true;
    }
    this.arm(sampleMs);
  }

  private maybeCompact(target: number): void {
    if (this.inFlight || target < 1 || target <= this.c.compactRevision()) return;
    this.inFlight = true;
    this.c.compact(target, () => {
      this.inFlight = false;
    });
  }

  private arm(delayMs: number): void {
    this.timer = this.c.timer.setTimer(delayMs, () => {
      this.timer = undefined;
      this.tick();
    });
  }
}
