/**
 * The runtime's own configuration (the protocol's is `RaftConfig`): when to snapshot the state
 * machine and how much log to keep behind a snapshot.
 */
import type { ConfigProblem } from '../../core/config.js';

export interface RaftRuntimeConfig {
  /**
   * Take a snapshot of the state machine once this many entries were applied since the last
   * snapshot; the log before it is then dropped (Raft §7). 0 turns snapshots off. Snapshots
   * also need a state machine with `snapshot` and `restore` and a storage that keeps snapshots
   * (the write-ahead log does).
   * Unit: entries. Default: 10 000 (etcd 3.5's; 3.2 to 3.4 used 100 000). The state is
   * encoded whole each time, in steps when the state machine offers `beginSnapshot`.
   * Trade-off: lower bounds the log (and the recovery replay) tighter, at the cost of writing
   * the whole state more often.
   */
  readonly snapshotEntries: number;
  /**
   * Entries kept in memory below a new snapshot's index, so that a follower only a little
   * behind catches up with appends rather than the whole snapshot (etcd's
   * SnapshotCatchUpEntries). The write-ahead log keeps more: everything after the previous
   * snapshot.
   * Unit: entries. Default: 1 000.
   * Trade-off: memory against fewer InstallSnapshots after short outages.
   */
  readonly snapshotCatchUpEntries: number;
  /**
   * `addVoter` waits this long for the new learner to hold every committed entry before it
   * promotes it; then it gives up (the learner stays a learner: remove it or promote later).
   * Unit: ms. Default: 60 000 (a new member may need a whole snapshot and the log after it).
   */
  readonly learnerCatchUpMsMax: number;
  /**
   * The wait between two steps of a snapshot taken in steps (`StateMachine.beginSnapshot`),
   * and between two pieces of a snapshot file being written. 0: the next event-loop turn.
   * Unit: ms. Default: 0. Trade-off: above 0 a snapshot takes longer (and holds its capture's
   * memory longer) but leaves more of each millisecond to requests; the simulator sets it to
   * spread a snapshot over virtual time, so entries apply and snapshots arrive meanwhile.
   */
  readonly snapshotStepIntervalMs: number;
}

export const RAFT_RUNTIME_DEFAULTS: RaftRuntimeConfig = Object.freeze({
  snapshotEntries: 10_000,
  snapshotCatchUpEntries: 1_000,
  learnerCatchUpMsMax: 60_000,
  snapshotStepIntervalMs: 0,
});

/** Every rule `config` breaks, all at once; empty when it is valid. */
export function validateRaftRuntimeConfig(config: RaftRuntimeConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const field of ['snapshotEntries', 'snapshotCatchUpEntries'] as const) {
    const value = config[field];
    if (!Number.isSafeInteger(value) || value < 0) {
      problems.push({ field, value, rule: 'must be a non-negative integer (entries)' });
    }
  }
  const stepMs = config.snapshotStepIntervalMs;
  if (typeof stepMs !== 'number' || !(stepMs >= 0) || !Number.isFinite(stepMs)) {
    problems.push({ field: 'snapshotStepIntervalMs', value: stepMs,
      rule: 'must be a non-negative number (ms)' });
  }
  const waitMs = config.learnerCatchUpMsMax;
  if (typeof waitMs !== 'number' || !(waitMs > 0) || !Number.isFinite(waitMs)) {
    problems.push({ field: 'learnerCatchUpMsMax', value: waitMs, rule: 'must be a positive number (ms)' });
  }
  return problems;
}
