/**
 * @packageDocumentation
 * The leader-side lease tracker of the consistent core (the Lease pattern): leases live in the
 * replicated store (src/core/kv), but only the leader tracks their expiry, on its monotonic
 * clock, and every decision reaches the replicas through the log.
 *
 * Invariants (docs/leases.md proves them and states the assumptions):
 * - Never earlier: a lease ends no sooner than TTL / (1 + ρ) after a leader received its last
 *   acknowledged keep-alive (or its grant), across any number of leader changes. A keep-alive
 *   is answered only after a leadership confirmation begun after it arrived, and only when the
 *   log says `renewing` (a later leader then restarts the full TTL at its election) or a
 *   checkpoint proposed after it records the extended deadline. Keep-alives share
 *   confirmations (those of one event-loop turn, or of `keepAliveLingerMs`), which only delays
 *   answers.
 * - Not much later: a lease with no keep-alives is revoked within (TTL + checkpointIntervalMs
 *   + 2 × electionTimeoutMsMax) / (1 − ρ) of its last keep-alive: a new leader counts on from
 *   the log's remaining TTL (from when it applied it), never from the full TTL, unless a
 *   keep-alive may have been acknowledged since the last checkpoint.
 * - A deposed leader revokes nothing: an expiry is proposed only after a leadership
 *   confirmation, and an office closes the moment the node stops leading.
 * - Deterministic: time comes from the Clock and Timer ports only, so the simulator drives it.
 *
 * @example
 * ```ts
 * const tracker = new LeaseTracker(LEASE_DEFAULTS, {
 *   clock, timer, leases: store,
 *   propose: (command, done) => runtime.propose(encodeKvCommand(command), done),
 *   confirmLeadership: (done) => runtime.read((o) => done(o.kind === 'ready')),
 * });
 * // state machine apply: tracker.onApplied(store.applyEntry(entry), entryArrivalMs);
 * // role changes: tracker.becomeLeader(term) / tracker.becomeFollower();
 * tracker.keepAlive(leaseId, (answer) => reply(answer)); // { kind: 'ok', remainingMs, ... }
 * ```
 */
export { LeaseTracker } from './lease-tracker.js';
export {
  LEASE_DEFAULTS, LEASE_NO_MUTANTS, LEASE_WAITERS_MAX_DEFAULT, leaseTimingOf, leaseTtlProblem,
  validateLeaseConfig,
  type LeaseConfig, type LeaseMutants, type LeaseRaftTiming,
} from './lease-config.js';
export type {
  LeaseAnswer, LeaseProposalOutcome, LeaseTrackerComponents, LeaseTrackerStats, LeaseView,
} from './types.js';
