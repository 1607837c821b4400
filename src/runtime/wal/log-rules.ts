/**
 * The rules every RaftStorage enforces on what it is asked to store: a last line of defence
 * against a Raft bug reaching the disk. Breaking one is a programmer error (an assertion).
 */
import { assert } from '../../core/assert.js';
import type { LogIndex } from '../../core/ids.js';
import type { Entry, HardState } from '../../core/raft/types.js';

/**
 * Checks `entries` against a log ending at `lastIndex` whose commit index is `commitIndex`.
 * Returns the index the log must first be cut back to (Raft §5.3: a conflicting suffix is
 * replaced), or undefined when the entries simply extend the log.
 */
export function checkAppend(
  entries: readonly Entry[],
  lastIndex: number,
  commitIndex: number,
): LogIndex | undefined {
  const first = entries[0];
  assert(first !== undefined, 'append: no entries');
  assert(Number.isSafeInteger(first.index) && first.index >= 1 && first.index <= lastIndex + 1,
    () => `append: first index ${first.index} must be in [1, ${lastIndex + 1}] (no gaps)`);
  for (let i = 1; i < entries.length; i++) {
    const previous = entries[i - 1]!;
    const entry = entries[i]!;
    assert(entry.index === previous.index + 1,
      () => `append: index ${entry.index} follows ${previous.index}; entries must be consecutive`);
    assert(entry.term >= previous.term,
      () => `append: term ${entry.term} at index ${entry.index} is below ${previous.term}`);
  }
  if (first.index > lastIndex) return undefined;
  // Raft §5.4 (Leader Completeness): a committed entry is never replaced.
  assert(first.index > commitIndex,
    () => `append: replacing from index ${first.index} would cut committed index ${commitIndex}`);
  return (first.index - 1) as LogIndex;
}

/** Checks that `next` may follow `previous` in a log ending at `lastIndex`. */
export function checkHardState(previous: HardState, next: HardState, lastIndex: number): void {
  // Raft Figure 2: currentTerm only grows; votedFor is fixed once cast in a term.
  assert(Number.isSafeInteger(next.term) && next.term >= previous.term,
    () => `saveHardState: term ${next.term} below the stored term ${previous.term}`);
  assert(next.term !== previous.term || previous.vote === undefined || next.vote === previous.vote,
    () => `saveHardState: vote changed from ${previous.vote} to ${next.vote} in term ${next.term}`);
  // A node commits only entries it holds: stage entries before the hard state that commits them.
  assert(Number.isSafeInteger(next.commitIndex) && next.commitIndex >= 0 &&
    next.commitIndex <= lastIndex,
  () => `saveHardState: commit index ${next.commitIndex} beyond the last index ${lastIndex}`);
}
