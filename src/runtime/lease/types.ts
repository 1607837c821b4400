/**
 * What the lease tracker needs from its host (the consistent core, or a test) and what it
 * answers. The host owns the Raft node and the replicated store; the tracker only reads the
 * store's leases, proposes its own bookkeeping commands and asks for leadership confirmations.
 */
import type {
  KvApplyResult, KvLease, KvLeaseSystemCommand,
} from '../../core/kv/index.js';
import type { Clock } from '../../ports/clock.js';
import type { Timer } from '../../ports/timer.js';

/** The replicated leases, as this replica has applied them. */
export interface LeaseView {
  lease(id: number): KvLease | undefined;
  /** Every lease, in id order. */
  leases(): Iterable<KvLease>;
}

/** How a proposal of the tracker ended (see RaftRuntime's ProposalOutcome). */
export type LeaseProposalOutcome =
  | { readonly kind: 'applied'; readonly result: KvApplyResult }
  | { readonly kind: 'failed' | 'unknown'; readonly reason: string };

export interface LeaseTrackerComponents {
  readonly clock: Clock;
  readonly timer: Timer;
  readonly leases: LeaseView;
  /**
   * Proposes `command` in the current term; `done` once, after it was applied (with the
   * store's result) or when it certainly or possibly was not.
   */
  propose(command: KvLeaseSystemCommand, done: (outcome: LeaseProposalOutcome) => void): void;
  /**
   * ReadIndex (Raft thesis §6.4): `done(true)` once a majority acknowledged this node as leader
   * in a heartbeat round begun after the call, and the state machine applied everything
   * committed before it; `done(false)` when that cannot be had.
   */
  confirmLeadership(done: (confirmed: boolean) => void): void;
}

/** What a keep-alive (or a time-to-live question) gets. */
export type LeaseAnswer =
  /** `remainingMs`: the leader's deadline minus now, on its monotonic clock. */
  | { readonly kind: 'ok'; readonly leaseId: number; readonly ttlMs: number;
    readonly remainingMs: number }
  /** The lease does not exist (never granted, revoked, or expired). */
  | { readonly kind: 'not-found'; readonly leaseId: number }
  /** This node does not lead (any more): ask the leader. */
  | { readonly kind: 'not-leader' }
  /** Leadership could not be confirmed, or the renewal mark did not commit: retry. */
  | { readonly kind: 'unavailable'; readonly reason: string }
  /** LeaseConfig.waitersMax callers wait already: refused at once, retry after a back-off. */
  | { readonly kind: 'overloaded'; readonly reason: string };

/** Counters for metrics and tests. */
export interface LeaseTrackerStats {
  readonly leading: boolean;
  /** Leases with a deadline on this leader. */
  readonly tracked: number;
  /** Leases past their deadline, being revoked. */
  readonly expiring: number;
  readonly keepAlivesAnswered: number;
  readonly checkpointEntries: number;
  readonly renewEntries: number;
  readonly expireEntries: number;
}
