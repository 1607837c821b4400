/**
 * Majority arithmetic over one set of voters: the voters of the membership in force. Membership
 * changes one server at a time (membership.ts), so one set is always enough (no joint
 * consensus).
 */
import { assert } from '../assert.js';
import type { NodeId } from '../ids.js';

/** The smallest majority of `voterCount` voters. */
export function quorumSize(voterCount: number): number {
  assert(voterCount > 0, () => `quorum of ${voterCount} voters`);
  return Math.floor(voterCount / 2) + 1;
}

/**
 * The largest value that a majority of voters has reached: with match indexes, the highest
 * index stored on a majority; with contact times, the latest instant by which a majority had
 * been heard from.
 */
export function majorityValue(values: readonly number[]): number {
  // Runs on every acknowledgement and deadline check over a handful of voters: an insertion
  // sort (descending) of a plain copy, with no comparator calls and no typed array.
  const sorted = values.slice();
  for (let i = 1; i < sorted.length; i++) {
    const value = sorted[i]!;
    let j = i - 1;
    for (; j >= 0 && sorted[j]! < value; j--) sorted[j + 1] = sorted[j]!;
    sorted[j + 1] = value;
  }
  const value = sorted[quorumSize(values.length) - 1];
  assert(value !== undefined, () => `majorityValue of ${values.length} values`);
  return value;
}

export type VoteOutcome = 'won' | 'lost' | 'pending';

/** Whether the answers so far (true = granted) decide the election among `voters`. */
export function tallyVotes(voters: readonly NodeId[],
  answers: ReadonlyMap<NodeId, boolean>): VoteOutcome {
  let granted = 0;
  let refused = 0;
  for (const voter of voters) {
    const answer = answers.get(voter);
    if (answer === true) granted++;
    if (answer === false) refused++;
  }
  const quorum = quorumSize(voters.length);
  if (granted >= quorum) return 'won';
  if (refused >= quorum) return 'lost';
  return 'pending';
}
