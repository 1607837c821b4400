/**
 * The leader's bookkeeping for linearizable reads without log writes (Raft thesis §6.4,
 * ReadIndex): each read records the commit index when it arrived, then waits until a majority
 * has answered a heartbeat round sent after that (so this node still led when the read
 * arrived). Every heartbeat broadcast is one numbered round; many reads share one round
 * (batching), and an answer to round r also confirms every earlier round. Rounds restart with
 * each leadership (a new tracker per term).
 */
import { assert } from '../assert.js';
import type { LogIndex, NodeId } from '../ids.js';

/** A read waiting for its round to be confirmed. `from` is undefined for this node's own. */
export interface PendingRead {
  readonly requestId: string;
  readonly from: NodeId | undefined;
  readonly index: LogIndex;
  readonly round: number;
}

/** A read that arrived before this leader committed an entry of its term (thesis §6.4 step 1). */
export interface EarlyRead {
  readonly requestId: string;
  readonly from: NodeId | undefined;
}

/** Send times kept for rounds not yet confirmed; older ones are forgotten (lease only). */
const ROUNDS_REMEMBERED_MAX = 64;

export class ReadRounds {
  private reads: PendingRead[] = [];
  private early: EarlyRead[] = [];
  private sentRound = 0;
  private confirmedRound = 0;
  private readonly sentAtMs = new Map<number, number>();

  /** Reads held (waiting for a round, or for the first commit of the term). */
  get size(): number {
    return this.reads.length + this.early.length;
  }

  /** The last round broadcast (0: none yet). */
  get lastSentRound(): number {
    return this.sentRound;
  }

  /** A read to confirm with the next broadcast; `index` is the commit index at its arrival. */
  add(requestId: string, from: NodeId | undefined, index: LogIndex): void {
    this.reads.push({ requestId, from, index, round: this.sentRound + 1 });
  }

  /** A read that must wait until the leader commits an entry of its own term. */
  addEarly(requestId: string, from: NodeId | undefined): void {
    this.early.push({ requestId, from });
  }

  /** The reads that waited for the first commit of the term; they are now the caller's. */
  takeEarly(): EarlyRead[] {
    const early = this.early;
    this.early = [];
    return early;
  }

  /** Whether some read waits for a round that has not been sent. */
  wantsRound(): boolean {
    const last = this.reads[this.reads.length - 1];
    return last !== undefined && last.round > this.sentRound;
  }

  /** A heartbeat broadcast leaves now: its round number. */
  startRound(nowMs: number): number {
    this.sentRound++;
    this.sentAtMs.set(this.sentRound, nowMs);
    if (this.sentAtMs.size > ROUNDS_REMEMBERED_MAX) {
      this.sentAtMs.delete(this.sentRound - ROUNDS_REMEMBERED_MAX);
    }
    return this.sentRound;
  }

  /**
   * A majority has answered round `round` (or a later one): returns the reads it releases and
   * when that round was sent (undefined when forgotten or already confirmed).
   */
  confirm(round: number): { reads: PendingRead[]; sentAtMs: number | undefined } {
    assert(round <= this.sentRound, () => `round ${round} confirmed, only ${this.sentRound} sent`);
    if (round <= this.confirmedRound) return { reads: [], sentAtMs: undefined };
    const sentAtMs = this.sentAtMs.get(round);
    for (let r = this.confirmedRound + 1; r <= round; r++) this.sentAtMs.delete(r);
    this.confirmedRound = round;
    let released = 0;
    while (released < this.reads.length && this.reads[released]!.round <= round) released++;
    const reads = this.reads.slice(0, released);
    this.reads = this.reads.slice(released);
    return { reads, sentAtMs };
  }

  /** Every read held, for failing them when leadership ends; the tracker is empty after. */
  clear(): (PendingRead | EarlyRead)[] {
    const all = [...this.early, ...this.reads];
    this.early = [];
    this.reads = [];
    return all;
  }
}
