/**
 * The leader's view of one follower's log (etcd's Progress): how far it matches, what to send
 * next, and the flow control state.
 *
 * - `probe`: the leader does not know where the follower's log diverges. It sends one append at
 *   a time and waits for the answer (or the next heartbeat response) before sending another.
 * - `replicate`: the follower accepted an append, so the leader streams entries optimistically
 *   (advancing `nextIndex` on send), with at most `inflightMessagesMax` unacknowledged messages.
 * - `snapshot`: the follower needs entries the leader compacted away: the leader sends its
 *   snapshot one chunk at a time (the next chunk when the previous one is answered, the same
 *   one again after a heartbeat answer), from the offset the follower asks for. The snapshot
 *   under way is kept here until the follower has it, even when the leader takes a newer one:
 *   restarting with each newer snapshot would never finish when a transfer takes longer than
 *   the leader takes to write `snapshotEntries` entries (a lagging follower starved forever).
 *
 * Learners (non-voting members) have a Progress like voters; the quorums skip them.
 */
import { assert, assertNever } from '../assert.js';
import type { LogIndex } from '../ids.js';
import { logIndex } from '../ids.js';
import type { Snapshot } from './types.js';

/** A snapshot a leader is sending a follower, with the checksum its chunks carry. */
export interface SnapshotUnderWay {
  readonly snapshot: Snapshot;
  /** CRC-32C of `snapshot.data`. */
  readonly checksum: number;
}

export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/** A ring buffer of the last indexes of unacknowledged append messages, oldest first. */
export class Inflights {
  private readonly lastIndexes: number[];
  private start = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    assert(Number.isInteger(capacity) && capacity > 0, () => `inflights capacity ${capacity}`);
    this.lastIndexes = new Array<number>(capacity).fill(0);
  }

  count(): number {
    return this.size;
  }

  full(): boolean {
    return this.size === this.capacity;
  }

  /** Records a sent message whose last entry is `lastIndex` (increasing from call to call). */
  add(lastIndex: number): void {
    assert(!this.full(), () => `inflights full (${this.capacity})`);
    const newest = this.size > 0 ? this.at(this.size - 1) : -1;
    assert(lastIndex > newest, () => `inflights out of order: ${lastIndex} after ${newest}`);
    this.lastIndexes[(this.start + this.size) % this.capacity] = lastIndex;
    this.size++;
  }

  /** Frees every message whose last index is <= `index` (they were acknowledged). */
  freeTo(index: number): void {
    while (this.size > 0 && this.at(0) <= index) {
      this.start = (this.start + 1) % this.capacity;
      this.size--;
    }
  }

  reset(): void {
    this.start = 0;
    this.size = 0;
  }

  private at(offset: number): number {
    return this.lastIndexes[(this.start + offset) % this.capacity] as number;
  }
}

export class Progress {
  /** The follower's log matches the leader's up to here (0: unknown). */
  matchIndex: LogIndex = logIndex(0);
  /** The next entry to send. Invariant: matchIndex < nextIndex. */
  nextIndex: LogIndex;
  state: ProgressState = 'probe';
  /**
   * Set after each append sent; cleared by a heartbeat response or an answer. In `probe` it
   * stops further appends; in `replicate` it only stops empty (probe-like) appends.
   */
  paused = false;
  /** The highest commit index already sent, capped at nextIndex - 1 (etcd's pendingCommit). */
  commitSentIndex: LogIndex = logIndex(0);
  readonly inflights: Inflights;
  /** When the leader last heard an answer from this follower (check-quorum). */
  lastContactMs: number;
  /** The latest heartbeat round this follower answered (ReadIndex, see read-index.ts). */
  readRoundAcked = 0;
  /** In `snapshot`: the index of the snapshot being sent, and the next byte to send. */
  pendingSnapshotIndex: LogIndex = logIndex(0);
  snapshotOffsetBytes = 0;
  /**
   * In `snapshot`: the snapshot being sent (undefined in the other states). One per follower at
   * most, so a leader holds at most one older snapshot per lagging follower beside its own.
   */
  snapshotUnderWay: SnapshotUnderWay | undefined = undefined;

  constructor(nextIndex: LogIndex, inflightMessagesMax: number, nowMs: number) {
    this.nextIndex = nextIndex;
    this.inflights = new Inflights(inflightMessagesMax);
    this.lastContactMs = nowMs;
  }

  becomeProbe(): void {
    this.state = 'probe';
    this.snapshotUnderWay = undefined;
    this.resetFlow();
  }

  becomeReplicate(): void {
    this.state = 'replicate';
    this.snapshotUnderWay = undefined;
    this.resetFlow();
  }

  /** The follower needs `underWay`'s snapshot: send it from its first byte, to its last. */
  becomeSnapshot(underWay: SnapshotUnderWay): void {
    this.state = 'snapshot';
    this.resetFlow();
    this.snapshotUnderWay = underWay;
    this.pendingSnapshotIndex = underWay.snapshot.meta.index;
    this.snapshotOffsetBytes = 0;
  }

  /** True when at least one entry can be sent now. */
  canSendEntries(lastIndex: number): boolean {
    return this.nextIndex <= lastIndex && (this.state === 'probe' || !this.inflights.full());
  }

  /** True when an append with commit index `commitIndex` would tell the follower something. */
  canRaiseCommit(commitIndex: number): boolean {
    return this.commitSentIndex < Math.min(commitIndex, this.nextIndex - 1);
  }

  /** Whether the leader should send an append now (etcd's ShouldSendMsgApp). */
  shouldSendAppend(lastIndex: number, commitIndex: number): boolean {
    switch (this.state) {
      case 'probe':
      case 'snapshot':
        return !this.paused;
      case 'replicate':
        return this.canRaiseCommit(commitIndex) ||
          (this.matchIndex < lastIndex && (!this.paused || this.canSendEntries(lastIndex)));
      default:
        return assertNever(this.state, 'progress state');
    }
  }

  /** An append with `entryCount` entries (ending at `lastSentIndex`) and `commitIndex` left. */
  sentAppend(entryCount: number, lastSentIndex: number, commitIndex: number): void {
    if (this.state === 'replicate' && entryCount > 0) {
      this.nextIndex = logIndex(lastSentIndex + 1);
      this.inflights.add(lastSentIndex);
    }
    this.paused = true;
    this.commitSentIndex = logIndex(
      Math.min(Math.max(this.commitSentIndex, commitIndex), this.nextIndex - 1));
  }

  /** A success answer for `index`; false when it is stale (nothing new). */
  maybeUpdate(index: number): boolean {
    if (index <= this.matchIndex) return false;
    this.matchIndex = logIndex(index);
    if (this.nextIndex <= index) this.nextIndex = logIndex(index + 1);
    return true;
  }

  /**
   * A refusal of the append whose prevLogIndex was `rejectedIndex`; `probeIndex` is where the
   * leader's log can match the follower's at best. False when the refusal is stale.
   */
  maybeDecreaseTo(rejectedIndex: number, probeIndex: number): boolean {
    // Stale: the follower already matched past the refused point. (A follower that lost
    // entries it acknowledged also lands here: retrying would only repeat the refusal.)
    if (rejectedIndex <= this.matchIndex) return false;
    if (this.state === 'replicate') {
      this.nextIndex = logIndex(this.matchIndex + 1);
    } else {
      // In probe only one append is outstanding: any other refusal is a late duplicate.
      if (rejectedIndex !== this.nextIndex - 1) return false;
      this.nextIndex = logIndex(Math.max(Math.min(rejectedIndex, probeIndex + 1),
        this.matchIndex + 1));
      this.paused = false;
    }
    this.capCommitSent();
    return true;
  }

  private resetFlow(): void {
    this.paused = false;
    this.inflights.reset();
    this.nextIndex = logIndex(this.matchIndex + 1);
    this.capCommitSent();
  }

  private capCommitSent(): void {
    this.commitSentIndex = logIndex(Math.min(this.commitSentIndex, this.nextIndex - 1));
  }
}
