/**
 * The Raft log as the core sees it: the entries after a base in memory, plus which of them the
 * runtime has been asked to persist and which it has confirmed durable.
 *
 * Snapshots (Raft §7): entries live after a base (`baseIndex`, `baseTerm`), 0/0 until the log
 * is compacted (`compact`, after a snapshot covers the prefix) or replaced by an installed
 * snapshot (`restore`). `term()` answers `undefined` below the base.
 */
import { assert } from '../assert.js';
import type { LogIndex, Term } from '../ids.js';
import { logIndex, term as toTerm } from '../ids.js';
import type { Entry } from './types.js';

/** Counted against `bytesPerMessageMax` besides the data: index, term, kind, framing. */
export const ENTRY_OVERHEAD_BYTES = 16;

export function entrySizeBytes(entry: Entry): number {
  return entry.data.byteLength + ENTRY_OVERHEAD_BYTES;
}

export class RaftLog {
  /** The index just before the first entry held (0 until snapshots compact the log). */
  private baseIndex: LogIndex;
  /** The term of the entry at `baseIndex` (0 for index 0). */
  private baseTerm: Term;
  private entries: Entry[];
  /** Entries up to here were handed to the runtime in some Ready to persist. */
  private persistRequestedIndex: LogIndex;
  /** Entries up to here are durable: the Ready that carried them was advanced. */
  private stableIndex: LogIndex;

  /**
   * `entries` come from storage, so they are durable: consecutive from `base.index + 1`, where
   * `base` is the recovered snapshot's (index, term), or 0/0 without one.
   */
  constructor(entries: readonly Entry[], base = { index: logIndex(0), term: toTerm(0) }) {
    this.baseIndex = base.index;
    this.baseTerm = base.term;
    entries.forEach((e, i) => {
      assert(e.index === this.baseIndex + 1 + i,
        () => `recovered log is not consecutive from ${this.baseIndex + 1}: ` +
          `entry ${i} has index ${e.index}`);
      const previous = i === 0 ? this.baseTerm : (entries[i - 1] as Entry).term;
      assert(e.term >= previous, () => `recovered log term decreases at index ${e.index}`);
    });
    this.entries = [...entries];
    this.persistRequestedIndex = this.lastIndex();
    this.stableIndex = this.lastIndex();
  }

  firstIndex(): LogIndex {
    return logIndex(this.baseIndex + 1);
  }

  /** The index before the first entry held: the compacted prefix ends here. */
  getBaseIndex(): LogIndex {
    return this.baseIndex;
  }

  /**
   * Drops the entries up to `index` (a snapshot covers them, Raft §7); the entry at `index`
   * becomes the base. Only durable entries may go: their replacement is the snapshot.
   */
  compact(index: LogIndex): void {
    if (index <= this.baseIndex) return;
    assert(index <= this.stableIndex,
      () => `compact to ${index} past the durable index ${this.stableIndex}`);
    const term = this.entryAt(index).term;
    this.entries = this.entries.slice(index - this.baseIndex);
    this.baseIndex = index;
    this.baseTerm = term;
  }

  /**
   * Replaces the whole log with a snapshot's base (an InstallSnapshot, Raft §7: the follower's
   * entries are discarded; the caller checks first that the log does not already hold
   * (`index`, `term`)). The snapshot is persisted by the same Ready that carries it, so the
   * base counts as requested for persistence; a node acts on it only after that Ready.
   */
  restore(index: LogIndex, term: Term): void {
    this.entries = [];
    this.baseIndex = index;
    this.baseTerm = term;
    this.persistRequestedIndex = index;
    this.stableIndex = index;
  }

  lastIndex(): LogIndex {
    return logIndex(this.baseIndex + this.entries.length);
  }

  lastTerm(): Term {
    return this.entries[this.entries.length - 1]?.term ?? this.baseTerm;
  }

  /** The term at `index`, or undefined when the index is past the end or compacted away. */
  term(index: number): Term | undefined {
    if (index === this.baseIndex) return this.baseTerm;
    if (index < this.baseIndex || index > this.lastIndex()) return undefined;
    return this.entryAt(index).term;
  }

  entryAt(index: number): Entry {
    const entry = this.entries[index - this.baseIndex - 1];
    assert(entry !== undefined && entry.index === index,
      () => `log has no entry ${index} (held: ${this.firstIndex()}..${this.lastIndex()})`);
    return entry;
  }

  /** Entries with indexes in [from, toInclusive]. */
  slice(from: number, toInclusive: number): Entry[] {
    if (toInclusive < from) return [];
    assert(from > this.baseIndex && toInclusive <= this.lastIndex(),
      () => `log slice ${from}..${toInclusive} outside ${this.firstIndex()}..${this.lastIndex()}`);
    return this.entries.slice(from - this.baseIndex - 1, toInclusive - this.baseIndex);
  }

  /**
   * Entries from `from` for one append message: at most `entriesMax`, and at most `bytesMax`
   * bytes except that the first entry is always included.
   */
  sliceForMessage(from: number, entriesMax: number, bytesMax: number): Entry[] {
    const out: Entry[] = [];
    let bytes = 0;
    for (let i = from; i <= this.lastIndex() && out.length < entriesMax; i++) {
      const entry = this.entryAt(i);
      bytes += entrySizeBytes(entry);
      if (out.length > 0 && bytes > bytesMax) break;
      out.push(entry);
    }
    return out;
  }

  matchTerm(index: number, term: number): boolean {
    return this.term(index) === term;
  }

  /** Raft §5.4.1: (lastLogIndex, lastLogTerm) is at least as up to date as this log. */
  isUpToDate(lastLogIndex: number, lastLogTerm: number): boolean {
    const myTerm = this.lastTerm();
    return lastLogTerm > myTerm || (lastLogTerm === myTerm && lastLogIndex >= this.lastIndex());
  }

  /**
   * The first index of `entries` that is missing here or holds a different term (Raft §5.3:
   * such an entry and all after it must be replaced), or undefined when all are present.
   */
  findConflict(entries: readonly Entry[]): LogIndex | undefined {
    for (const e of entries) {
      if (!this.matchTerm(e.index, e.term)) return e.index;
    }
    return undefined;
  }

  /**
   * The largest index <= `index` whose term is <= `term`, with that term: no index above it
   * can match an entry of term `term` or lower, since terms never decrease along a log. Used
   * on both sides of the fast back-off (etcd's findConflictByTerm).
   */
  findConflictByTerm(index: number, term: number): { index: LogIndex; term: Term } {
    let i = Math.max(Math.min(index, this.lastIndex()), this.baseIndex);
    for (; i > this.baseIndex; i--) {
      const t = this.entryAt(i).term;
      if (t <= term) return { index: logIndex(i), term: t };
    }
    return { index: logIndex(i), term: this.term(i) ?? toTerm(0) };
  }

  /** The leader's append at the end of the log. */
  append(entry: Entry): void {
    assert(entry.index === this.lastIndex() + 1,
      () => `append at ${entry.index} but last index is ${this.lastIndex()}`);
    assert(entry.term >= this.lastTerm(),
      () => `append of term ${entry.term} after term ${this.lastTerm()}`);
    this.entries.push(entry);
  }

  /**
   * Replaces everything from `entries[0].index` on with `entries` (Raft §5.3: delete the
   * conflicting entry and all that follow it). Returns the number of entries removed.
   */
  truncateAndAppend(entries: readonly Entry[]): number {
    const first = entries[0];
    if (first === undefined) return 0;
    assert(first.index > this.baseIndex && first.index <= this.lastIndex() + 1,
      () => `truncateAndAppend at ${first.index} outside ${this.firstIndex()}..` +
        `${this.lastIndex() + 1}`);
    const keep = first.index - this.baseIndex - 1;
    const removed = this.entries.length - keep;
    this.entries.length = keep;
    for (const e of entries) this.append(e);
    const kept = logIndex(first.index - 1);
    if (this.persistRequestedIndex > kept) this.persistRequestedIndex = kept;
    if (this.stableIndex > kept) this.stableIndex = kept;
    return removed;
  }

  hasUnpersisted(): boolean {
    return this.persistRequestedIndex < this.lastIndex();
  }

  /** Entries not yet handed out for persistence (they go into the next Ready). */
  unpersisted(): Entry[] {
    return this.slice(this.persistRequestedIndex + 1, this.lastIndex());
  }

  /** The entries returned by `unpersisted()` were put into a Ready. */
  markPersistRequested(): void {
    this.persistRequestedIndex = this.lastIndex();
  }

  /**
   * The runtime made entries up to (`index`, `term`) durable. Ignored when the log no longer
   * holds that entry (it was overwritten while the write was in flight; the replacement comes
   * in a later Ready). By Log Matching, holding (index, term) means the prefix is also the one
   * that was written.
   */
  stableTo(index: LogIndex, term: Term): void {
    if (this.matchTerm(index, term) && index > this.stableIndex) this.stableIndex = index;
  }

  getStableIndex(): LogIndex {
    return this.stableIndex;
  }
}
