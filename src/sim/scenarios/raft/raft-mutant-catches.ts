/**
 * Where each planted Raft bug (RaftMutants, src/core/raft/config.ts) is caught: measured on
 * 2026-12-02 with `conclave sim --scenario S --seed 1 --seeds N --mutant M [flags]` (defaults
 * otherwise), the seeds of the range that failed and the checker that fired first. Every Raft
 * scenario takes every Raft mutant; this table tells a user which run reaches which bug.
 * test/sim/mutant-catches.test.ts replays the first seed of each entry.
 */
import type { RaftMutants } from '../../../core/raft/index.js';
import type { MutantCatch } from '../../scenario.js';

export const RAFT_MUTANT_CATCHES: Readonly<Record<keyof RaftMutants, MutantCatch>> = {
  noNoopAtTermStart: { scenario: 'raft', flags: {}, first: 1, count: 20,
    caughtOn: [1, 3, 8, 11, 13, 14, 17, 18], checker: 'fully-committed' },
  voteNotPersisted: { scenario: 'raft-vote-restart', flags: {}, first: 1, count: 20,
    caughtOn: [2, 3, 6, 8], checker: 'election-safety',
    note: '--scenario raft catches it on 0 of seeds 1–20: a restart right after a vote, in '
      + 'the same term, is rare there' },
  ackBeforeSync: { scenario: 'raft-ack-crash', flags: {}, first: 1, count: 20,
    caughtOn: [1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
    checker: 'leader-completeness' },
  commitPreviousTermByCount: { scenario: 'raft-figure8', flags: {}, first: 1, count: 20,
    caughtOn: [1, 3, 4, 5, 6, 7, 8, 9, 11, 13, 14, 15, 16, 17, 18, 20],
    checker: 'leader-completeness' },
  preVoteWithoutCheckQuorum: { scenario: 'raft-partial-partition', flags: {}, first: 1,
    count: 10, caughtOn: [1, 3, 5, 7, 9], checker: 'majority-keeps-committing' },
  readsWithoutReadIndex: { scenario: 'raft', flags: {}, first: 1, count: 20,
    caughtOn: [1, 2, 4, 11], checker: 'linearizability' },
  configChangeBeforeTermCommit: { scenario: 'raft', flags: { membership: true, snapshots: true },
    first: 1, count: 20, caughtOn: [5, 11, 12, 19], checker: 'membership' },
  trustSenderTerm: { scenario: 'raft', flags: { hostile: true }, first: 1, count: 10,
    caughtOn: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], checker: 'term-provenance' },
};
