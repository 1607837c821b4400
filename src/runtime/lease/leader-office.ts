/**
 * One term of leadership, as the lease tracker lives it: a deadline per lease on this leader's
 * monotonic clock, keep-alives answered after a leadership confirmation, renewal marks and
 * checkpoints proposed through the log, expired leases revoked through the log.
 *
 * An office is established by its first leadership confirmation: by then the new leader has
 * committed an entry of its term, so every entry of earlier terms it will ever commit is applied
 * (a new leader commits its whole log), and the deadlines come from that final state: a lease
 * marked `renewing` restarts its full TTL from the election (a keep-alive may have been
 * acknowledged since its checkpoint, before the election); any other counts on from where its
 * latest grant or checkpoint reached this replica, never from the full TTL. Nothing is answered
 * or proposed before. A closed office proposes nothing more and answers every waiting caller
 * `not-leader`. docs/leases.md gives the rules and why they hold.
 *
 * Bounds: the callers it holds waiting (in `early`, `readWaiting`, `readBatch`, `renewBuffer`
 * and the renew batches, each caller in one of them) are at most LeaseConfig.waitersMax
 * together; one more is answered `overloaded` at once. Every other table is keyed by lease
 * and holds only leases of the store (whose `leasesMax` bounds it), or ids waiting to expire.
 * Each input (a call, a timer, a confirmation, a settled proposal) ends in checkInvariants().
 */
import { assert } from '../../core/assert.js';
import type {
  KvApplyResult, KvLeaseExpiry, KvLeaseRemaining,
} from '../../core/kv/index.js';
import type { TimerHandle } from '../../ports/timer.js';
import { DeadlineQueue } from './deadline-queue.js';
import { LEASE_WAITERS_MAX_DEFAULT, type LeaseConfig } from './lease-config.js';
import type {
  LeaseAnswer, LeaseProposalOutcome, LeaseTrackerComponents,
} from './types.js';

/**
 * Callers waiting for a confirmation that start one without lingering (see
 * LeaseConfig.keepAliveLingerMs): with this many, a heartbeat round per batch already costs
 * little per keep-alive, and lingering would only cap a pipelined stream's rate (256 keep-alives
 * in flight would be answered 256 per linger). Unit: callers.
 */
export const KEEP_ALIVE_BATCH_AT_ONCE = 64;

interface Waiter {
  readonly leaseId: number;
  readonly kind: 'keep-alive' | 'time-to-live';
  readonly done: (answer: LeaseAnswer) => void;
}

/** When a replica expects a lease to end, from its latest grant or checkpoint. */
export interface Shadow {
  /** Arrival (or, when unknown, apply) time + the remaining TTL recorded. Unit: ms. */
  readonly atMs: number;
  readonly arrivalKnown: boolean;
}

/** Keep-alives waiting for one `lease-renew` entry to apply. */
interface RenewBatch {
  readonly waiters: Waiter[];
}

/** Counters shared with the tracker (which outlives offices). */
export interface OfficeCounters {
  keepAlivesAnswered: number;
  checkpointEntries: number;
  renewEntries: number;
  expireEntries: number;
}

export class LeaderOffice {
  private readonly deadlines = new Map<number, number>();
  private readonly queue = new DeadlineQueue();
  /** Leases with an entry in `queue` (at most one each). */
  private readonly queued = new Set<number>();
  /** Past their deadline: keep-alives are refused, an expiry is or will be proposed. */
  private readonly expiring = new Set<number>();
  private expireQueue: number[] = [];
  private expireInflight = false;
  /** Leases in checkpoints proposed and not yet settled: their `renewing` mark will clear. */
  private readonly checkpointing = new Map<number, number>();
  /** Per lease, the renew batch proposed after its last checkpoint: new waiters may join it. */
  private readonly renewJoinable = new Map<number, RenewBatch>();
  private readonly renewBatches = new Set<RenewBatch>();
  private renewBuffer: Waiter[] = [];
  /** Callers that came before the office was established: taken again after it. */
  private early: Waiter[] = [];
  private readWaiting: Waiter[] = [];
  private readBatch: Waiter[] | undefined;
  private readTimer: TimerHandle | undefined;
  /** When `readTimer` fires (monotonic ms). */
  private readTimerAtMs = Infinity;
  /** When the latest keep-alive confirmation began (monotonic ms). */
  private readStartedAtMs = -Infinity;
  private closed = false;
  private established = false;
  private expiryTimer: TimerHandle | undefined;
  private expiryArmedAtMs = Infinity;
  private checkpointTimer: TimerHandle | undefined;
  private flushTimer: TimerHandle | undefined;
  private retryTimer: TimerHandle | undefined;
  /** Inputs under way (an input may call back into the office): invariants hold at 0. */
  private inputDepth = 0;
  private readonly waitersMax: number;

  constructor(
    readonly term: number,
    /** When this node took office, on its monotonic clock. */
    readonly sinceMs: number,
    private readonly config: LeaseConfig,
    private readonly c: LeaseTrackerComponents,
    private readonly counters: OfficeCounters,
  ) {
    this.waitersMax = config.waitersMax ?? LEASE_WAITERS_MAX_DEFAULT;
    assert(Number.isSafeInteger(this.waitersMax) && this.waitersMax >= 1,
      () => `lease office: waitersMax ${this.waitersMax}`);
  }

  /** The leader's wall clock as log time (whole ms: the store accepts integers only). */
  private logTimeMs(): number {
    return Math.floor(this.c.clock.wallMs());
  }

  get trackedCount(): number {
    return this.deadlines.size;
  }

  get expiringCount(): number {
    return this.expiring.size;
  }

  /**
   * Asks for the first confirmation (again after a failure), then establishes the office.
   * `shadowOf(id)`: when the lease's latest grant or checkpoint reached this replica, plus its
   * remaining TTL, and whether that arrival time is known (entries read back from disk at
   * start have none: their apply time stands in, so it is capped at the election).
   */
  start(shadowOf: (leaseId: number) => Shadow | undefined): void {
    this.input(() => {
      if (this.closed) return;
      this.c.confirmLeadership((confirmed) => this.input(() => {
        if (this.closed) return;
        if (!confirmed) {
          this.retryTimer = this.c.timer.setTimer(this.config.retryDelayMs, () => {
            this.retryTimer = undefined;
            this.start(shadowOf);
          });
          return;
        }
        this.establish(shadowOf);
      }));
    });
  }

  /**
   * Deadlines from the log (see the module comment). An entry written before the election
   * reached this replica before it too, so the election time + remaining TTL caps a shadow whose
   * arrival is unknown; one written since (a grant of this term) counts from its arrival. Then
   * the first checkpoint goes out at once, so a later leader does not restart the TTL of the
   * `renewing` leases again.
   */
  private establish(shadowOf: (leaseId: number) => Shadow | undefined): void {
    this.established = true;
    for (const lease of this.c.leases.leases()) {
      const fromLog = this.sinceMs + lease.remainingMs;
      const shadow = shadowOf(lease.id);
      // MUTANT ttlResetOnElection: every lease restarts its full TTL here (etcd's bug).
      const atMs = lease.renewing || this.config.mutants?.ttlResetOnElection === true
        ? this.sinceMs + lease.ttlMs
        : shadow === undefined ? fromLog
          : shadow.arrivalKnown ? shadow.atMs : Math.min(shadow.atMs, fromLog);
      this.setDeadline(lease.id, atMs);
    }
    this.checkpoint();
    this.armCheckpoint(this.config.checkpointIntervalMs);
    const early = this.early;
    this.early = [];
    for (const waiter of early) this.admit(waiter);
  }

  /** Leaves office: nothing more is proposed, every waiting caller hears `not-leader`. */
  close(): void {
    this.input(() => this.closeNow());
  }

  private closeNow(): void {
    if (this.closed) return;
    this.closed = true;
    for (const timer of [this.expiryTimer, this.checkpointTimer, this.flushTimer,
      this.retryTimer, this.readTimer]) timer?.cancel();
    const waiters = [...this.early, ...this.readWaiting, ...(this.readBatch ?? []),
      ...this.renewBuffer];
    this.early = [];
    for (const batch of this.renewBatches) waiters.push(...batch.waiters);
    this.readWaiting = [];
    this.readBatch = undefined;
    this.renewBuffer = [];
    this.renewBatches.clear();
    for (const waiter of waiters) waiter.done({ kind: 'not-leader' });
  }

  /** The leader's deadline minus now; undefined for an unknown or expiring lease. */
  remainingMs(leaseId: number): number | undefined {
    const atMs = this.deadlines.get(leaseId);
    if (atMs === undefined || this.expiring.has(leaseId)) return undefined;
    return Math.max(0, atMs - this.c.clock.monotonicMs());
  }

  /**
   * A keep-alive: the deadline moves to now + TTL at once (so the lease cannot expire while
   * the answer is prepared), and the answer waits for a leadership confirmation begun after
   * it (and, when needed, a renewal mark in the log). Before the office is established the
   * keep-alive waits, and is taken as if it arrived then (a later deadline: still safe).
   */
  keepAlive(leaseId: number, done: (answer: LeaseAnswer) => void): void {
    this.input(() => this.admit({ leaseId, kind: 'keep-alive', done }));
  }

  /** The remaining TTL, after a leadership confirmation (etcd PR #17642: no stale answer). */
  timeToLive(leaseId: number, done: (answer: LeaseAnswer) => void): void {
    this.input(() => this.admit({ leaseId, kind: 'time-to-live', done }));
  }

  /**
   * A new caller: refused when the office is closed (a caller answered by `close` may call
   * again before the tracker forgets this office) or holds waitersMax callers already.
   */
  private admit(waiter: Waiter): void {
    if (this.closed) return waiter.done({ kind: 'not-leader' });
    const waiting = this.waiterCount();
    if (waiting >= this.waitersMax) {
      return waiter.done({ kind: 'overloaded', reason: `${waiting} keep-alives and TTL `
        + `questions already wait on this leader (waitersMax ${this.waitersMax})` });
    }
    if (!this.established) return void this.early.push(waiter);
    if (waiter.kind === 'keep-alive') this.keepAliveNow(waiter.leaseId, waiter.done);
    else this.waitForRead(waiter);
  }

  private keepAliveNow(leaseId: number, done: (answer: LeaseAnswer) => void): void {
    const lease = this.c.leases.lease(leaseId);
    const nowMs = this.c.clock.monotonicMs();
    const atMs = this.deadlines.get(leaseId);
    if (atMs !== undefined && atMs <= nowMs) this.collectExpired(); // due: no resurrection
    if (lease === undefined || this.expiring.has(leaseId)) {
      return done({ kind: 'not-found', leaseId });
    }
    this.setDeadline(leaseId, nowMs + lease.ttlMs);
    this.waitForRead({ leaseId, kind: 'keep-alive', done });
  }

  /**
   * An applied entry. Before the office is established, `establish` reads the result from the
   * state; after, only entries of this term are applied (all earlier ones came first), and of
   * those only grants and ends matter here (checkpoints and renewals are our own doing).
   */
  onApplied(result: KvApplyResult): void {
    this.input(() => this.applied(result));
  }

  private applied(result: KvApplyResult): void {
    if (!this.established) return;
    switch (result.kind) {
      case 'lease-grant':
        this.setDeadline(result.leaseId, this.c.clock.monotonicMs() + result.ttlMs);
        break;
      case 'lease-revoke':
        this.forget([result.leaseId]);
        break;
      case 'lease-expire':
        this.forget(result.expired);
        break;
      default:
        break;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Inputs, bounds and invariants

  /** Runs one input; the outermost one ends in checkInvariants(). */
  private input(run: () => void): void {
    this.inputDepth++;
    try {
      run();
    } finally {
      this.inputDepth--;
    }
    if (this.inputDepth === 0) this.checkInvariants();
  }

  /** Callers waiting, wherever they wait (each in exactly one place). */
  private waiterCount(): number {
    let count = this.early.length + this.readWaiting.length + (this.readBatch?.length ?? 0)
      + this.renewBuffer.length;
    for (const batch of this.renewBatches) count += batch.waiters.length;
    return count;
  }

  /**
   * What holds between inputs; each check costs O(1) (or the few renew batches in flight), so
   * it runs after every input in production too. The last four are liveness: whatever waits
   * has a timer or a round in flight that will move it.
   */
  private checkInvariants(): void {
    const waiters = this.waiterCount();
    const context = (): string => `term ${this.term}: ${waiters} waiters, `
      + `${this.deadlines.size} deadlines, ${this.expiring.size} expiring, `
      + `${this.expireQueue.length} to expire, ${this.queue.size} queued`;
    assert(waiters <= this.waitersMax, () => `lease office: over waitersMax, ${context()}`);
    assert(!this.closed || waiters === 0, () => `lease office: closed with ${context()}`);
    assert(this.established || (this.deadlines.size === 0 && waiters === this.early.length),
      () => `lease office: acting before it is established, ${context()}`);
    assert(this.queue.size === this.queued.size,
      () => `lease office: ${this.queued.size} leases marked queued, ${context()}`);
    // expireQueue ⊆ expiring ⊆ deadlines, and every other deadline sits in the queue.
    assert(this.expireQueue.length <= this.expiring.size
      && this.expiring.size <= this.deadlines.size
      && this.deadlines.size - this.expiring.size <= this.queued.size,
    () => `lease office: deadlines, expiring and queues disagree, ${context()}`);
    if (this.closed) return;
    assert(this.expiryArmedAtMs === this.queue.peekMs(), () => `lease office: expiry armed `
      + `for ${this.expiryArmedAtMs}, earliest deadline ${this.queue.peekMs()}, ${context()}`);
    assert(this.readWaiting.length === 0 || this.readBatch !== undefined
      || this.readTimer !== undefined, () => `lease office: callers wait for a confirmation `
      + `nobody will start, ${context()}`);
    assert(this.renewBuffer.length === 0 || this.flushTimer !== undefined,
      () => `lease office: renewals buffered with no flush ahead, ${context()}`);
    assert(this.expireQueue.length === 0 || this.expireInflight || this.retryTimer !== undefined,
      () => `lease office: leases wait to expire with no expiry ahead, ${context()}`);
    assert(!this.established || this.checkpointTimer !== undefined,
      () => `lease office: no checkpoint ahead, ${context()}`);
  }

  // -------------------------------------------------------------------------------------------
  // Deadlines and expiry

  /** Moves the deadline later (never earlier: a leader's promise only grows). */
  private setDeadline(leaseId: number, atMs: number): void {
    const current = this.deadlines.get(leaseId);
    if (current !== undefined && current >= atMs) return;
    this.deadlines.set(leaseId, atMs);
    if (!this.queued.has(leaseId) && !this.expiring.has(leaseId)) {
      this.queue.push(atMs, leaseId);
      this.queued.add(leaseId);
      this.armExpiry();
    }
  }

  private forget(leaseIds: readonly number[]): void {
    for (const leaseId of leaseIds) {
      this.deadlines.delete(leaseId);
      this.expiring.delete(leaseId);
      this.checkpointing.delete(leaseId);
      this.renewJoinable.delete(leaseId);
    }
    // Only leases still expiring wait to expire (so the queue stays within `expiring`).
    if (this.expireQueue.length > 0) {
      this.expireQueue = this.expireQueue.filter((id) => this.expiring.has(id));
    }
  }

  private armExpiry(): void {
    const atMs = this.queue.peekMs();
    if (this.closed || atMs === this.expiryArmedAtMs) return;
    this.expiryTimer?.cancel();
    this.expiryTimer = undefined;
    this.expiryArmedAtMs = atMs;
    if (!Number.isFinite(atMs)) return;
    const delayMs = Math.max(0, atMs - this.c.clock.monotonicMs());
    this.expiryTimer = this.c.timer.setTimer(delayMs, () => this.input(() => {
      this.expiryTimer = undefined;
      this.expiryArmedAtMs = Infinity;
      this.collectExpired();
    }));
  }

  /** Leases whose deadline passed become `expiring`; stale queue entries are re-queued. */
  private collectExpired(): void {
    if (this.closed) return;
    const nowMs = this.c.clock.monotonicMs();
    while (this.queue.peekMs() <= nowMs) {
      const item = this.queue.pop();
      if (item === undefined) break;
      this.queued.delete(item.leaseId);
      const atMs = this.deadlines.get(item.leaseId);
      if (atMs === undefined || this.expiring.has(item.leaseId)) continue;
      if (atMs > nowMs) {
        this.queue.push(atMs, item.leaseId);
        this.queued.add(item.leaseId);
        continue;
      }
      this.expiring.add(item.leaseId);
      this.expireQueue.push(item.leaseId);
    }
    this.armExpiry();
    this.startExpire();
  }

  /**
   * One expiry entry at a time, each after a leadership confirmation: a deposed leader (one a
   * majority no longer follows) never gets one, so it revokes nothing.
   */
  private startExpire(): void {
    if (this.closed || this.expireInflight || this.expireQueue.length === 0) return;
    this.expireInflight = true;
    // MUTANT deposedLeaderRevokes: the expiry goes out without a leadership confirmation.
    const confirm = this.config.mutants?.deposedLeaderRevokes === true
      ? (done: (confirmed: boolean) => void): void => done(true)
      : (done: (confirmed: boolean) => void): void => this.c.confirmLeadership(done);
    confirm((confirmed) => this.input(() => {
      if (this.closed) return;
      if (!confirmed) {
        this.expireInflight = false;
        return this.retryExpireLater();
      }
      const expiries = this.takeExpiries();
      if (expiries.length === 0) {
        this.expireInflight = false;
        return this.startExpire();
      }
      this.counters.expireEntries += 1;
      this.c.propose({ kind: 'lease-expire', nowMs: this.logTimeMs(), leases: expiries },
        (outcome) => this.input(() => this.onExpireSettled(expiries, outcome)));
    }));
  }

  /** Up to one entry's worth of expiring leases that still exist, with their renewals. */
  private takeExpiries(): KvLeaseExpiry[] {
    const expiries: KvLeaseExpiry[] = [];
    for (const leaseId of this.expireQueue.splice(0, this.config.leasesPerEntryMax)) {
      const lease = this.c.leases.lease(leaseId);
      if (lease === undefined || !this.expiring.has(leaseId)) continue;
      expiries.push({ leaseId, renewals: lease.renewals });
    }
    return expiries;
  }

  private onExpireSettled(expiries: readonly KvLeaseExpiry[],
    outcome: LeaseProposalOutcome): void {
    if (this.closed) return;
    this.expireInflight = false;
    if (outcome.kind === 'applied' && outcome.result.kind === 'lease-expire') {
      // Kept: a renewal of ours applied after we looked (its callers heard `not-found`,
      // since the lease was expiring); still expired, so decide again with the new count.
      for (const leaseId of outcome.result.kept) {
        if (this.expiring.has(leaseId)) this.expireQueue.push(leaseId);
      }
      return this.startExpire();
    }
    // Not applied, or refused by the store (a bug, logged by the host): try again later, for
    // the leases not revoked meanwhile.
    this.expireQueue.unshift(...expiries.map((e) => e.leaseId)
      .filter((id) => this.expiring.has(id)));
    this.retryExpireLater();
  }

  private retryExpireLater(): void {
    if (this.retryTimer !== undefined || this.closed) return;
    this.retryTimer = this.c.timer.setTimer(this.config.retryDelayMs, () => this.input(() => {
      this.retryTimer = undefined;
      this.startExpire();
    }));
  }

  // -------------------------------------------------------------------------------------------
  // Keep-alives: confirmation, then an answer or a renewal mark

  private waitForRead(waiter: Waiter): void {
    this.readWaiting.push(waiter);
    this.scheduleRead();
  }

  /**
   * When the next confirmation starts. Callers of one event-loop turn always share one (a
   * zero-delay timer); one is in flight at a time, and callers that arrive meanwhile wait for
   * the next. The next begins keepAliveLingerMs after the previous one began, so that callers
   * arriving a few at a time share a round (and their renewal marks an entry), or at once when
   * that time has passed or KEEP_ALIVE_BATCH_AT_ONCE callers wait. Every caller's round still
   * begins after it arrived: sharing only delays an answer, never advances it.
   */
  private scheduleRead(): void {
    if (this.closed || this.readBatch !== undefined || this.readWaiting.length === 0) return;
    const nowMs = this.c.clock.monotonicMs();
    const lingerMs = this.config.keepAliveLingerMs ?? 0;
    const atMs = this.readWaiting.length >= KEEP_ALIVE_BATCH_AT_ONCE ? nowMs
      : Math.max(nowMs, this.readStartedAtMs + lingerMs);
    if (this.readTimer !== undefined && this.readTimerAtMs <= atMs) return;
    this.readTimer?.cancel();
    this.readTimerAtMs = atMs;
    this.readTimer = this.c.timer.setTimer(atMs - nowMs, () => this.input(() => {
      this.readTimer = undefined;
      this.readTimerAtMs = Infinity;
      this.startRead();
    }));
  }

  private startRead(): void {
    if (this.closed || this.readBatch !== undefined || this.readWaiting.length === 0) return;
    const batch = this.readWaiting;
    this.readWaiting = [];
    this.readBatch = batch;
    this.readStartedAtMs = this.c.clock.monotonicMs();
    this.c.confirmLeadership((confirmed) => this.input(() => {
      if (this.closed || this.readBatch !== batch) return;
      this.readBatch = undefined;
      for (const waiter of batch) {
        if (confirmed) this.afterConfirm(waiter);
        else waiter.done({ kind: 'unavailable', reason: 'leadership not confirmed' });
      }
      this.scheduleRead();
    }));
  }

  /**
   * Confirmed leader, everything committed before applied. A keep-alive is answered now when
   * the log already says `renewing` and no checkpoint of ours is about to clear it; otherwise
   * it waits for a renewal mark proposed after every checkpoint we proposed.
   */
  private afterConfirm(waiter: Waiter): void {
    const lease = this.c.leases.lease(waiter.leaseId);
    if (lease === undefined || this.expiring.has(waiter.leaseId)) {
      return waiter.done({ kind: 'not-found', leaseId: waiter.leaseId });
    }
    if (waiter.kind === 'time-to-live' || (lease.renewing
      && !this.checkpointing.has(waiter.leaseId))) {
      return this.answer(waiter);
    }
    const batch = this.renewJoinable.get(waiter.leaseId);
    if (batch !== undefined) return void batch.waiters.push(waiter);
    this.renewBuffer.push(waiter);
    if (this.flushTimer === undefined) {
      this.flushTimer = this.c.timer.setTimer(0, () => this.input(() => {
        this.flushTimer = undefined;
        this.flushRenewals();
      }));
    }
  }

  private answer(waiter: Waiter): void {
    const { leaseId } = waiter;
    const lease = this.c.leases.lease(leaseId);
    const remainingMs = this.remainingMs(leaseId);
    if (lease === undefined || remainingMs === undefined || remainingMs <= 0) {
      return waiter.done({ kind: 'not-found', leaseId });
    }
    if (waiter.kind === 'keep-alive') this.counters.keepAlivesAnswered += 1;
    waiter.done({ kind: 'ok', leaseId, ttlMs: lease.ttlMs, remainingMs });
  }

  /** Proposes `lease-renew` for the buffered leases, one entry per leasesPerEntryMax. */
  private flushRenewals(): void {
    if (this.closed) return;
    const waiters = new Map<number, Waiter[]>();
    for (const waiter of this.renewBuffer) {
      const list = waiters.get(waiter.leaseId) ?? [];
      list.push(waiter);
      waiters.set(waiter.leaseId, list);
    }
    this.renewBuffer = [];
    const ids = [...waiters.keys()];
    for (let at = 0; at < ids.length; at += this.config.leasesPerEntryMax) {
      const chunk = ids.slice(at, at + this.config.leasesPerEntryMax);
      const batch: RenewBatch = { waiters: chunk.flatMap((id) => waiters.get(id) ?? []) };
      for (const id of chunk) this.renewJoinable.set(id, batch);
      this.renewBatches.add(batch);
      this.counters.renewEntries += 1;
      this.c.propose({ kind: 'lease-renew', nowMs: this.logTimeMs(), leaseIds: chunk },
        (outcome) => this.input(() => this.onRenewSettled(batch, chunk, outcome)));
    }
  }

  private onRenewSettled(batch: RenewBatch, leaseIds: readonly number[],
    outcome: LeaseProposalOutcome): void {
    if (this.closed) return;
    this.renewBatches.delete(batch);
    for (const id of leaseIds) {
      if (this.renewJoinable.get(id) === batch) this.renewJoinable.delete(id);
    }
    const reason = outcome.kind !== 'applied' ? outcome.reason
      : outcome.result.kind === 'error' ? JSON.stringify(outcome.result.error) : undefined;
    for (const waiter of batch.waiters) {
      if (reason === undefined) this.answer(waiter);
      else waiter.done({ kind: 'unavailable', reason: `renewal not applied: ${reason}` });
    }
  }

  // -------------------------------------------------------------------------------------------
  // Checkpoints

  private armCheckpoint(delayMs: number): void {
    if (this.closed) return;
    this.checkpointTimer = this.c.timer.setTimer(delayMs, () => this.input(() => {
      this.checkpointTimer = undefined;
      this.checkpoint();
      this.armCheckpoint(this.config.checkpointIntervalMs);
    }));
  }

  /**
   * Records the remaining TTL of every lease that is, or is about to be, marked `renewing`
   * (the others' log record is still exact) and so clears the mark. Each remaining TTL
   * includes every keep-alive received before now; later ones need a new mark.
   */
  private checkpoint(): void {
    const nowMs = this.c.clock.monotonicMs();
    const entries: KvLeaseRemaining[] = [];
    for (const lease of this.c.leases.leases()) {
      if (!lease.renewing && !this.renewJoinable.has(lease.id)) continue;
      const atMs = this.deadlines.get(lease.id);
      if (atMs === undefined || this.expiring.has(lease.id)) continue;
      // Rounded up: a checkpoint may lengthen a lease by under a millisecond, never shorten it.
      entries.push({ leaseId: lease.id, remainingMs: Math.ceil(Math.max(0, atMs - nowMs)) });
    }
    for (let at = 0; at < entries.length; at += this.config.leasesPerEntryMax) {
      const chunk = entries.slice(at, at + this.config.leasesPerEntryMax);
      for (const { leaseId } of chunk) {
        this.checkpointing.set(leaseId, (this.checkpointing.get(leaseId) ?? 0) + 1);
        this.renewJoinable.delete(leaseId);
      }
      this.counters.checkpointEntries += 1;
      this.c.propose({ kind: 'lease-checkpoint', nowMs: this.logTimeMs(), leases: chunk },
        () => this.input(() => this.onCheckpointSettled(chunk)));
    }
  }

  private onCheckpointSettled(chunk: readonly KvLeaseRemaining[]): void {
    for (const { leaseId } of chunk) {
      const count = (this.checkpointing.get(leaseId) ?? 0) - 1;
      if (count > 0) this.checkpointing.set(leaseId, count);
      else this.checkpointing.delete(leaseId);
    }
  }
}
