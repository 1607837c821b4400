/**
 * The lease tracker of one consistent-core member. On every replica it notes, on its own
 * monotonic clock, when each lease's latest grant or checkpoint reached this replica (the
 * "shadow" deadline: receipt time + remaining TTL, set once the entry is applied), so that if
 * this replica is elected it counts on from there. Receipt, not apply: a follower learns that
 * an entry committed only with the leader's next message, which a failing leader never sends.
 * While the replica leads, a `LeaderOffice` holds the real deadlines, answers keep-alives and
 * proposes renewals, checkpoints and expiries. Losing leadership closes the
 * office at once: a deposed leader revokes nothing.
 *
 * Drive it from the host: `onApplied` after each applied entry, `becomeLeader` /
 * `becomeFollower` on role changes, `resync` after a snapshot replaced the state.
 */
import { assert } from '../../core/assert.js';
import type { KvApplyResult } from '../../core/kv/index.js';
import { LeaderOffice, type OfficeCounters, type Shadow } from './leader-office.js';
import { LEASE_WAITERS_MAX_DEFAULT, type LeaseConfig } from './lease-config.js';
import type { LeaseAnswer, LeaseTrackerComponents, LeaseTrackerStats } from './types.js';

export class LeaseTracker {
  /** Per lease: when its latest grant or checkpoint reached this replica + that TTL. */
  private readonly shadows = new Map<number, Shadow>();
  private office: LeaderOffice | undefined;
  private stopped = false;
  private readonly counters: OfficeCounters = {
    keepAlivesAnswered: 0, checkpointEntries: 0, renewEntries: 0, expireEntries: 0,
  };

  constructor(private readonly config: LeaseConfig, private readonly c: LeaseTrackerComponents) {
    // validateLeaseConfig (with Raft's timing) is the user-facing check; this one guards code.
    for (const field of ['checkpointIntervalMs', 'leasesPerEntryMax', 'retryDelayMs'] as const) {
      const value = config[field];
      assert(Number.isSafeInteger(value) && value >= 1, () => `lease config: ${field} ${value}`);
    }
    const waitersMax = config.waitersMax ?? LEASE_WAITERS_MAX_DEFAULT;
    assert(Number.isSafeInteger(waitersMax) && waitersMax >= 1,
      () => `lease config: waitersMax ${waitersMax}`);
    const lingerMs = config.keepAliveLingerMs ?? 0;
    assert(Number.isSafeInteger(lingerMs) && lingerMs >= 0,
      () => `lease config: keepAliveLingerMs ${lingerMs}`);
  }

  /** The term this replica leads in, if it leads. */
  get leaderTerm(): number | undefined {
    return this.office?.term;
  }

  /** This replica's shadow deadline of a lease (for tests and diagnostics). Unit: ms. */
  shadowMs(leaseId: number): number | undefined {
    return this.shadows.get(leaseId)?.atMs;
  }

  stats(): LeaseTrackerStats {
    return {
      leading: this.office !== undefined,
      tracked: this.office?.trackedCount ?? 0,
      expiring: this.office?.expiringCount ?? 0,
      ...this.counters,
    };
  }

  /** This replica leads `term` from now on. */
  becomeLeader(term: number): void {
    if (this.stopped || this.office?.term === term) return;
    // MUTANT deposedLeaderRevokes: an office left open by an earlier term carries on.
    if (this.config.mutants?.deposedLeaderRevokes === true && this.office !== undefined) return;
    this.office?.close();
    this.office = new LeaderOffice(term, this.c.clock.monotonicMs(), this.config, this.c,
      this.counters);
    this.office.start((leaseId) => this.shadows.get(leaseId));
  }

  /** This replica no longer leads: stop at once. */
  becomeFollower(): void {
    // MUTANT deposedLeaderRevokes: the office stays open after its node stopped leading.
    if (this.config.mutants?.deposedLeaderRevokes === true) return;
    this.closeOffice();
  }

  /**
   * After the host applied a committed entry with `result`. `receivedAtMs`: when the entry was
   * appended to this replica's log (its monotonic clock); default: now (e.g. for entries
   * recovered from disk at start, whose arrival time is unknown: later is safe).
   */
  onApplied(result: KvApplyResult, receivedAtMs?: number): void {
    if (this.stopped) return;
    const arrivalKnown = receivedAtMs !== undefined;
    const fromMs = Math.min(receivedAtMs ?? Infinity, this.c.clock.monotonicMs());
    switch (result.kind) {
      case 'lease-grant':
        // A retried grant returns its saved result: only a new, existing lease counts.
        if (this.shadows.has(result.leaseId)
          || this.c.leases.lease(result.leaseId) === undefined) return;
        this.shadows.set(result.leaseId, { atMs: fromMs + result.ttlMs, arrivalKnown });
        break;
      case 'lease-checkpoint':
        for (const { leaseId, remainingMs } of result.leases) {
          this.shadows.set(leaseId, { atMs: fromMs + remainingMs, arrivalKnown });
        }
        break;
      case 'lease-revoke':
        this.shadows.delete(result.leaseId);
        break;
      case 'lease-expire':
        for (const leaseId of result.expired) this.shadows.delete(leaseId);
        break;
      default:
        break;
    }
    this.office?.onApplied(result);
  }

  /**
   * The state was replaced by a snapshot: every lease's shadow restarts from now with its
   * recorded remaining TTL (now is after the snapshot was taken, so no lease gets shorter).
   */
  resync(): void {
    this.shadows.clear();
    const nowMs = this.c.clock.monotonicMs();
    for (const lease of this.c.leases.leases()) {
      this.shadows.set(lease.id, { atMs: nowMs + lease.remainingMs, arrivalKnown: false });
    }
  }

  /** A client's keep-alive (leader only). `done` is called exactly once. */
  keepAlive(leaseId: number, done: (answer: LeaseAnswer) => void): void {
    if (this.office === undefined) return done({ kind: 'not-leader' });
    this.office.keepAlive(leaseId, done);
  }

  /** The lease's remaining TTL after a leadership confirmation (leader only). */
  timeToLive(leaseId: number, done: (answer: LeaseAnswer) => void): void {
    if (this.office === undefined) return done({ kind: 'not-leader' });
    this.office.timeToLive(leaseId, done);
  }

  /** The leader's remaining TTL now, without confirmation; undefined off the leader. */
  remainingMs(leaseId: number): number | undefined {
    return this.office?.remainingMs(leaseId);
  }

  stop(): void {
    this.stopped = true;
    this.closeOffice();
  }

  private closeOffice(): void {
    this.office?.close();
    this.office = undefined;
  }
}
