/**
 * The lease scenario's checkers, against the simulator's real (virtual) time. They learn what
 * happened from the members only: each request a member received and each answer it gave (with
 * the instant it received that very request), and each member's applied lease set after every
 * entry. Per lease, with ρ, TTL and the bounds of `leaseEndBoundsMs` (src/core/kv/lease-timing):
 *
 * - never-earlier: the lease ends (the first member to apply its revoke or expiry, keys and
 *   all) no sooner than TTL / (1 + ρ) after a member that acknowledged a keep-alive (or the
 *   grant) of it received that request — unless its holder had a revoke received first. For a
 *   grant, the earliest receipt of any attempt of the call counts (a retry may find the grant
 *   applied by an earlier attempt). This is docs/leases.md's claim, from receipt; the send time
 *   the brief names is earlier, so it is implied.
 * - holder-safety: when the lease ends, its holder (unless it revoked) no longer counts on it:
 *   its own clock has passed its local deadline (DESIGN.md §5, lease safety).
 * - lease-keys: when a member removes a lease, none of the keys put with it is still attached.
 * - not-much-later: once nobody keeps the lease alive, with t0 the last instant a member
 *   received or answered a keep-alive of it (or the grant applied), the lease is gone by
 *   t0 + latestMs + allowanceMs, where the cluster was free of every nemesis fault from
 *   t0 − settleMs to then (the bound's assumptions A1–A3 need a healthy majority; leadership
 *   transfers are allowed, they are not faults). Leases whose window had faults are checked
 *   after the heal instead, with the bound counted from max(t0, heal): not-much-later-after-heal.
 */
import { assert } from '../../../core/assert.js';
import type { NodeId } from '../../../core/ids.js';
import { leaseEndBoundsMs, type KvStore, type LeaseTiming } from '../../../core/kv/index.js';
import type { ClientRequest } from '../../../ports/client-transport.js';
import type { Violation } from '../../scenario.js';
import type { ServeObserver, SimReply } from './core-protocol.js';

export interface LeaseCheckerTiming extends LeaseTiming {
  /**
   * Added to latestMs: the leadership confirmation before the expiry is proposed, its commit
   * round, and one retry pause of the tracker (docs/leases.md: "plus a leadership
   * confirmation"). Unit: ms.
   */
  readonly allowanceMs: number;
  /**
   * How long the cluster must have been fault-free before t0 for the upper bound to be checked
   * in the safety phase: time for a leader change begun by the last fault to end, and for a
   * member that was cut off to catch up. Unit: ms.
   */
  readonly settleMs: number;
}

/** What the checker asks of a lease's holder (the shipped client's Lease, on its clock). */
export interface HolderView {
  readonly client: NodeId;
  /** Still sending keep-alives. */
  keeping(): boolean;
  /** Counts on the lease now (its local deadline has not passed). */
  holds(): boolean;
  /** The holder's clock now minus its local deadline. Unit: ms (holder clock). */
  pastDeadlineMs(): number;
}

interface LeaseRecord {
  readonly leaseId: number;
  readonly ttlMs: number;
  readonly appearedAtMs: number;
  endedAtMs: number | undefined;
  /** Receipt, at the acknowledging member, of the last acknowledged keep-alive or grant. */
  ackReceivedAtMs: number | undefined;
  /** The last instant a member received or answered a keep-alive of the lease. */
  touchedAtMs: number;
  revokeReceivedAtMs: number | undefined;
  holder: HolderView | undefined;
  readonly keys: Set<string>;
  flagged: boolean;
}

/** Slack to each bound, the minimum over checked leases (undefined: none checked). Unit: ms. */
export interface LeaseSlack {
  readonly neverEarlierMsMin: number | undefined;
  readonly neverEarlierChecked: number;
  /** On the holder's clock. */
  readonly holderMsMin: number | undefined;
  readonly holderChecked: number;
  readonly upperQuietMsMin: number | undefined;
  readonly upperQuietChecked: number;
  readonly upperHealMsMin: number | undefined;
  readonly upperHealChecked: number;
}

export interface LeaseCounts {
  granted: number;
  ended: number;
  /** Ended after their holder's revoke reached a member. */
  revoked: number;
  keepAlivesAcked: number;
}

export class LeaseChecker implements ServeObserver {
  readonly violations: Violation[] = [];
  readonly counts: LeaseCounts = { granted: 0, ended: 0, revoked: 0, keepAlivesAcked: 0 };
  private readonly leases = new Map<number, LeaseRecord>();
  private readonly live = new Set<LeaseRecord>();
  /**
   * Per grant call (its idempotency key, the same on every attempt): the earliest receipt of
   * any of its attempts.
   */
  private readonly grantCallReceivedAtMs = new Map<string, number>();
  private readonly memberLeases = new Map<NodeId, Set<number>>();
  private healedAtMs: number | undefined;
  private slack = {
    neverEarlier: new MinTracker(), holder: new MinTracker(),
    upperQuiet: new MinTracker(), upperHeal: new MinTracker(),
  };

  constructor(
    private readonly nowMs: () => number,
    private readonly timing: LeaseCheckerTiming,
    /** Since when no nemesis fault touched any member or the network (Infinity during one). */
    private readonly quietSinceMs: () => number,
  ) {}

  /** From now on faults are over: leases are checked against the bound counted from here. */
  healed(atMs: number): void {
    this.healedAtMs = atMs;
  }

  /** The holder of a granted lease, told by the workload once the grant was answered. */
  registerHolder(leaseId: number, holder: HolderView): void {
    const record = this.leases.get(leaseId);
    if (record !== undefined) record.holder = holder;
  }

  slacks(): LeaseSlack {
    const { neverEarlier, holder, upperQuiet, upperHeal } = this.slack;
    return {
      neverEarlierMsMin: neverEarlier.min, neverEarlierChecked: neverEarlier.count,
      holderMsMin: holder.min, holderChecked: holder.count,
      upperQuietMsMin: upperQuiet.min, upperQuietChecked: upperQuiet.count,
      upperHealMsMin: upperHeal.min, upperHealChecked: upperHeal.count,
    };
  }

  /** When the lease ended on the first member that ended it; undefined while it lives. */
  endedAtMs(leaseId: number): number | undefined {
    return this.leases.get(leaseId)?.endedAtMs;
  }

  /** Leases granted and not ended yet. */
  get liveCount(): number {
    return this.live.size;
  }

  // -------------------------------------------------------------------------------------------
  // What members do (ServeObserver, and their applied state)

  handled(_member: NodeId, request: ClientRequest): void {
    const nowMs = this.nowMs();
    switch (request.kind) {
      case 'lease-keepalive':
        return this.touch(request.leaseId, nowMs);
      case 'lease-grant': {
        const call = `${request.clientId}#${request.sequence}`;
        this.grantCallReceivedAtMs.set(call,
          Math.min(nowMs, this.grantCallReceivedAtMs.get(call) ?? Infinity));
        return;
      }
      case 'lease-revoke': {
        const record = this.leases.get(request.leaseId);
        if (record !== undefined) record.revokeReceivedAtMs ??= nowMs;
        return;
      }
      case 'put':
        if (request.lease !== undefined) this.leases.get(request.lease)?.keys.add(request.key);
        return;
      case 'txn':
        // Election and lock candidate keys are put in transactions, attached to their lease.
        for (const op of [...request.success, ...request.failure]) {
          if (op.kind !== 'put' || op.lease === undefined) continue;
          this.leases.get(op.lease)?.keys.add(op.key);
        }
        return;
      default:
        return;
    }
  }

  answered(_member: NodeId, request: ClientRequest, reply: SimReply,
    receivedAtMs: number): void {
    if (request.kind === 'lease-keepalive') {
      this.touch(request.leaseId, this.nowMs());
      const record = this.leases.get(request.leaseId);
      if (reply.kind !== 'ok' || record === undefined) return;
      this.counts.keepAlivesAcked++;
      record.ackReceivedAtMs = Math.max(record.ackReceivedAtMs ?? -Infinity, receivedAtMs);
      return;
    }
    if (request.kind !== 'lease-grant' || reply.kind !== 'ok') return;
    const body = reply.body as { kind?: unknown; leaseId?: unknown };
    if (body.kind !== 'lease-grant' || typeof body.leaseId !== 'number') return;
    const record = this.leases.get(body.leaseId);
    const firstMs = this.grantCallReceivedAtMs.get(`${request.clientId}#${request.sequence}`)
      ?? receivedAtMs;
    if (record !== undefined) {
      record.ackReceivedAtMs = Math.max(record.ackReceivedAtMs ?? -Infinity, firstMs);
    }
  }

  /** A member (re)started with an empty store: it will apply its log again. */
  memberStarted(member: NodeId): void {
    this.memberLeases.set(member, new Set());
  }

  /** After every entry a member applied: which leases appeared or went. */
  memberApplied(member: NodeId, store: KvStore): void {
    const known = this.memberLeases.get(member) ?? new Set<number>();
    this.memberLeases.set(member, known);
    // An entry adds one lease (a grant) or removes some (a revoke or an expiry), never both:
    // so an unchanged count means an unchanged set. Checked, not trusted (a lookup per lease):
    // were it false, a lease could appear and another vanish unseen.
    if (store.leaseCount === known.size) {
      for (const id of known) {
        assert(store.lease(id) !== undefined, () => `lease checker: ${member} applied an entry `
          + `that removed lease ${id} and added another (${known.size} leases before and after)`);
      }
      return;
    }
    this.memberRestored(member, store);
  }

  /**
   * A member's store was replaced by a snapshot (recovered at start, or installed from the
   * leader): its leases may have changed any way at once, so compare them all.
   */
  memberRestored(member: NodeId, store: KvStore): void {
    const known = this.memberLeases.get(member) ?? new Set<number>();
    this.memberLeases.set(member, known);
    const now = new Set(store.leases().map((lease) => lease.id));
    for (const id of now) {
      if (known.has(id)) continue;
      known.add(id);
      this.appeared(id, store.lease(id)!.ttlMs);
    }
    for (const id of [...known]) {
      if (now.has(id)) continue;
      known.delete(id);
      this.removed(member, id, store);
    }
  }

  // -------------------------------------------------------------------------------------------
  // The checks

  /** The upper bounds, for every lease nobody keeps alive; call every few ms of virtual time. */
  sweep(): void {
    const nowMs = this.nowMs();
    for (const record of this.live) {
      if (record.flagged || record.holder?.keeping() === true) continue;
      const t0 = Math.max(record.appearedAtMs, record.touchedAtMs);
      const latestMs = this.latestMs(record);
      if (nowMs <= t0 + latestMs) continue;
      if (this.quietSinceMs() <= t0 - this.timing.settleMs) {
        record.flagged = true;
        this.violate('not-much-later', `lease ${record.leaseId} (TTL ${record.ttlMs} ms) still `
          + `exists ${fmt(nowMs - t0)} ms after its last keep-alive at ${fmt(t0)} ms; bound `
          + `${fmt(latestMs)} ms, the cluster fault-free since ${fmt(this.quietSinceMs())} ms`
          + this.holderNote(record));
      } else if (this.healedAtMs !== undefined
        && nowMs > Math.max(t0, this.healedAtMs) + latestMs) {
        record.flagged = true;
        this.violate('not-much-later-after-heal', `lease ${record.leaseId} (TTL `
          + `${record.ttlMs} ms) still exists ${fmt(nowMs - Math.max(t0, this.healedAtMs))} ms `
          + `after max(last keep-alive ${fmt(t0)}, heal ${fmt(this.healedAtMs)}); bound `
          + `${fmt(latestMs)} ms` + this.holderNote(record));
      }
    }
  }

  private appeared(leaseId: number, ttlMs: number): void {
    const seen = this.leases.get(leaseId);
    if (seen !== undefined) {
      // Applied again (a restarted member), or on another member: the same grant entry, for a
      // lease id is the index of its grant in the log.
      assert(seen.ttlMs === ttlMs, () => `lease checker: lease ${leaseId} appeared with TTL `
        + `${ttlMs} ms, but was granted with ${seen.ttlMs} ms`);
      return;
    }
    const nowMs = this.nowMs();
    const record: LeaseRecord = {
      leaseId, ttlMs, appearedAtMs: nowMs, endedAtMs: undefined, ackReceivedAtMs: undefined,
      touchedAtMs: nowMs, revokeReceivedAtMs: undefined, holder: undefined, keys: new Set(),
      flagged: false,
    };
    this.leases.set(leaseId, record);
    this.live.add(record);
    this.counts.granted++;
  }

  private removed(member: NodeId, leaseId: number, store: KvStore): void {
    const record = this.leases.get(leaseId);
    // A member only tracks leases it saw appear, and `appeared` records every one.
    assert(record !== undefined, () => `lease checker: ${member} removed lease ${leaseId}, `
      + 'which never appeared');
    for (const key of record.keys) {
      if (store.get(key)?.lease === leaseId) {
        this.violate('lease-keys', `${member} removed lease ${leaseId} but key ${key} is `
          + 'still attached to it');
      }
    }
    if (record.endedAtMs !== undefined) return;
    record.endedAtMs = this.nowMs();
    this.live.delete(record);
    this.counts.ended++;
    const revoked = record.revokeReceivedAtMs !== undefined;
    if (revoked) this.counts.revoked++;
    else this.checkNeverEarlier(record, member);
    this.recordUpperSlack(record);
  }

  private checkNeverEarlier(record: LeaseRecord, member: NodeId): void {
    const endedAtMs = record.endedAtMs!;
    if (record.ackReceivedAtMs !== undefined) {
      const earliestMs = record.ackReceivedAtMs + leaseEndBoundsMs(record.ttlMs,
        this.timing).earliestMs;
      this.slack.neverEarlier.add(endedAtMs - earliestMs);
      if (endedAtMs < earliestMs) {
        this.violate('never-earlier', `lease ${record.leaseId} (TTL ${record.ttlMs} ms) ended on `
          + `${member} ${fmt(endedAtMs - record.ackReceivedAtMs)} ms after a member received `
          + `its last acknowledged keep-alive (at ${fmt(record.ackReceivedAtMs)} ms); at least `
          + `TTL/(1+ρ) = ${fmt(earliestMs - record.ackReceivedAtMs)} ms`);
      }
    }
    const holder = record.holder;
    if (holder === undefined) return;
    const pastMs = holder.pastDeadlineMs();
    this.slack.holder.add(pastMs);
    if (holder.holds()) {
      this.violate('holder-safety', `lease ${record.leaseId} ended on ${member} while its holder `
        + `${holder.client} still counts on it: ${fmt(-pastMs)} ms before its local deadline`);
    }
  }

  private recordUpperSlack(record: LeaseRecord): void {
    if (record.holder?.keeping() === true) return;
    const endedAtMs = record.endedAtMs!;
    const t0 = Math.max(record.appearedAtMs, record.touchedAtMs);
    const latestMs = this.latestMs(record);
    if (this.quietSinceMs() <= t0 - this.timing.settleMs) {
      this.slack.upperQuiet.add(t0 + latestMs - endedAtMs);
    } else if (this.healedAtMs !== undefined) {
      this.slack.upperHeal.add(Math.max(t0, this.healedAtMs) + latestMs - endedAtMs);
    }
  }

  private latestMs(record: LeaseRecord): number {
    return leaseEndBoundsMs(record.ttlMs, this.timing).latestMs + this.timing.allowanceMs;
  }

  private touch(leaseId: number, atMs: number): void {
    const record = this.leases.get(leaseId);
    if (record !== undefined) record.touchedAtMs = Math.max(record.touchedAtMs, atMs);
  }

  private holderNote(record: LeaseRecord): string {
    return record.holder === undefined ? ' (no holder: its grant went unanswered)'
      : ` (holder ${record.holder.client})`;
  }

  private violate(checker: string, message: string): void {
    this.violations.push({ checker, atMs: this.nowMs(), message });
  }
}

class MinTracker {
  min: number | undefined;
  count = 0;

  add(value: number): void {
    this.count++;
    this.min = this.min === undefined ? value : Math.min(this.min, value);
  }
}

function fmt(ms: number): string {
  return ms.toFixed(1);
}
